const path = require('node:path');
const { task, src, dest } = require('gulp');

// tsc emits only JavaScript; n8n also loads each node's icons and its codex file
// (`<Node>.node.json`, the categories and documentation links) from beside the compiled node.
task('build:icons', () => Promise.all([copy('nodes', '**/*.{png,svg,node.json}'), copy('credentials', '**/*.{png,svg}')]));

function copy(folder, pattern) {
	return new Promise((resolve, reject) => {
		src(path.resolve(folder, pattern), { encoding: false })
			.pipe(dest(path.resolve('dist', folder)))
			.on('finish', resolve)
			.on('error', reject);
	});
}
