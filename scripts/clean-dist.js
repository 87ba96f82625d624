// Stale files in dist/ would be packed and published, so every build starts empty.
require('node:fs').rmSync(require('node:path').join(__dirname, '..', 'dist'), { recursive: true, force: true });
