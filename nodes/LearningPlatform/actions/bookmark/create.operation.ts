import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { requiredId, requiredText } from '../../../shared/helpers';
import { apiFailure, apiRequest } from '../../../shared/transport';
import { contentTypeOptions } from '../../../shared/descriptions';

export const description: INodeProperties[] = [
	{
		displayName: 'Username',
		name: 'username',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. jane.doe',
		description: 'Login name of the learner who gets the bookmark',
	},
	{
		displayName: 'Content ID',
		name: 'contentId',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. 87',
		description: 'Numeric ID of the content to bookmark. Find IDs with Report → Get Content.',
	},
	{
		displayName: 'Content Type',
		name: 'contentType',
		type: 'options',
		options: contentTypeOptions,
		default: 'course',
		required: true,
		description:
			'Type of the content; it must match the content ID, or the platform answers "Content not found"',
	},
];

export const option = {
	name: 'Create',
	description: 'Bookmark a content item for a learner (one bookmark per input item)',
	action: 'Create a bookmark',
};

/** What an AI model reads about this operation when the node is its tool. */
export const toolDescription =
	"Bookmarks one piece of content for one learner. Needs the learner's Username (login name, e.g. learner023), the numeric Content ID, and its Content Type (course, live learning, resource or video). Returns the bookmark created (id, bookmarkable_id, created_at) with the username and content. Fails with a message naming what was not found when the learner or the content does not exist.";

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	// an expression resolving to null must read as missing, not as the text "null"
	const username = requiredText.call(this, 'username', 'Username', itemIndex);
	const contentId = requiredId.call(this, 'contentId', 'Content ID', itemIndex);
	const contentType = requiredText.call(this, 'contentType', 'Content Type', itemIndex);
	const response = (await apiRequest.call(this, 'POST', 'bookmark', '', {
		body: { username, contentId, contentType },
		itemIndex,
		notFoundMessage: `No learner "${username}" or no ${contentType} with ID ${contentId} on this tenancy`,
		notFoundDescription:
			"Check the username (the learner's login name) and that the content ID is a piece of content of the chosen Content Type (Report → Get Content lists them). The platform's own words, in brackets, say which of the two it did not find.",
	})) as IDataObject;
	if (response?.success === false) {
		const notCreated = {
			message: `The bookmark for "${username}" on content ${contentId} was not created`,
		};
		throw apiFailure(this.getNode(), notCreated, { itemIndex, body: response });
	}
	// `{success, bookmark}`: the bookmark itself is what a workflow continues with, plus what the
	// user gave (the bookmark only has the learner's numeric `userid`)
	const bookmark = response?.bookmark;
	const created = bookmark && typeof bookmark === 'object' ? (bookmark as IDataObject) : response;
	return { ...created, username, contentId, contentType };
}
