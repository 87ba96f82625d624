/**
 * The node classes, loaded from their TypeScript sources.
 *
 * Why not a plain `import ... from '.../LearningPlatform.node'`: under tsx that specifier resolves
 * to the codex file `LearningPlatform.node.json` next to the source (Node's CommonJS resolution
 * tries `.json` before tsx's `.ts`), so the import yields the codex object and no class. The
 * explicit `.ts` path avoids that; `typeof import(...)` keeps the types.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
type ActionModule = typeof import('../../nodes/LearningPlatform/LearningPlatform.node');
type TriggerModule =
	typeof import('../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node');

export const { LearningPlatform } =
	require('../../nodes/LearningPlatform/LearningPlatform.node.ts') as ActionModule;
export const { LearningPlatformTrigger } =
	require('../../nodes/LearningPlatformTrigger/LearningPlatformTrigger.node.ts') as TriggerModule;
