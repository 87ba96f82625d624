import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { optionalId } from '../../../shared/helpers';
import { runReportForItem, type Report } from '../../helpers/reports';
import {
	contentTypeFilter,
	filtersCollection,
	idFilter,
	showSuspendedOption,
	simplifyProperty,
	userFieldsOption,
} from '../../../shared/descriptions';
import { toolLimitProperty } from '../../helpers/toolOutput';
import { reportOptions } from './report.descriptions';

const flagOptions: INodeProperties[] = [userFieldsOption, showSuspendedOption];

export const report: Report = {
	type: 'activitycompletions',
	label: 'Activity Completions',
	simplifiedFields: [
		'username',
		'contentid',
		'contentname',
		'activityid',
		'activityname',
		'activitycompletionstatus',
		'activitytimecompleted',
	],
};

export const description: INodeProperties[] = [
	{
		displayName: 'User ID or Content ID is required (at least one of the two)',
		name: 'requiredFilterNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'User ID',
		name: 'userId',
		type: 'string',
		default: '',
		placeholder: 'e.g. 1042',
		description:
			'Numeric ID of the learner whose activity completions to return. Required unless Content ID is set.',
	},
	{
		displayName: 'Content ID',
		name: 'contentId',
		type: 'string',
		default: '',
		placeholder: 'e.g. 87',
		description:
			'Numeric ID of the content (course or Live Learning) whose activity completions to return. Required unless User ID is set. Find IDs with the "Get Content" operation.',
	},
	filtersCollection([
		idFilter('Activity ID', 'activityId', 'Only completions of this activity (numeric ID)'),
		contentTypeFilter('Only completions within content of this type', {
			options: [
				{ name: 'Course', value: 'Course' },
				{ name: 'Live Learning', value: 'Live Learning' },
			],
			default: 'Course',
		}),
	]),
	toolLimitProperty,
	reportOptions(...flagOptions),
	simplifyProperty(report.simplifiedFields),
];

export const option = {
	name: 'Get Activity Completions',
	description:
		'Run the activity completions report for a learner and/or a content item; outputs one item per completed activity',
	action: 'Get activity completions',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	"Runs the learning platform's activity completions report for one learner (User ID) and/or one course (Content ID) and waits for it (usually seconds). Needs a numeric User ID or Content ID: find a course's Content ID with the content report. Returns one record per completed activity: username, contentid, contentname, activityid, activityname, activitycompletionstatus, activitytimecompleted. At most Limit records; a last item notes how many more there were.";

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const userId = optionalId.call(this, 'userId', 'User ID', itemIndex);
	const contentId = optionalId.call(this, 'contentId', 'Content ID', itemIndex);
	// The server would answer "Failed" only after a request; say it before spending one.
	if (userId === undefined && contentId === undefined) {
		throw new NodeOperationError(this.getNode(), 'User ID or Content ID is required', {
			itemIndex,
			description:
				'Activity completions are read per learner or per content: set "User ID", "Content ID", or both.',
		});
	}
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	return await runReportForItem.call(
		this,
		itemIndex,
		report,
		flagOptions.map((flag) => flag.name),
		{
			userId,
			contentId,
			activityId: optionalId.call(this, 'filters.activityId', 'Activity ID', itemIndex),
			contentType: filters.contentType || undefined,
		},
	);
}
