// The key pair of global-setup.js goes with the run.
const fs = require('node:fs');
const path = require('node:path');

module.exports = async () => {
  const file = process.env.TEST_JWT_KEY_FILE;
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
};
