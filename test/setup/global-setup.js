// Once per jest run, before any worker starts: an RSA key pair for the test servers' tokens, in
// a file the workers find through TEST_JWT_KEY_FILE (they inherit this process's environment).
// A test server is given a copy in its fresh DATA_DIR (test/helpers/server.ts), where it would
// otherwise generate its own: ~0.2 s of CPU at every start. global-teardown.js removes it.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

module.exports = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fav-jest-'));
  const file = path.join(dir, 'jwt-private.pem');
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  process.env.TEST_JWT_KEY_FILE = file;
};
