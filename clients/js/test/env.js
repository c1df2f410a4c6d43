// What the tests run against: the stack that tests/integration/t_sdk_js.sh started.
// SANDBOXD_URL and SANDBOXD_TOKEN (a write token of the repository's owner, read by the SDK
// itself), SDK_TEST_REPO ("owner/name", one commit on main holding a file x with "x"),
// SDK_TEST_OWNER (its owner's login), SDK_TEST_OTHER_TOKEN (another user's write token, with
// the write role on the repository).
export const URL = process.env.SANDBOXD_URL;
export const TOKEN = process.env.SANDBOXD_TOKEN;
export const REPO = process.env.SDK_TEST_REPO;
export const OWNER = process.env.SDK_TEST_OWNER;
export const OTHER_TOKEN = process.env.SDK_TEST_OTHER_TOKEN;
if (!URL || !TOKEN || !REPO || !OWNER || !OTHER_TOKEN)
	throw new Error("set SANDBOXD_URL, SANDBOXD_TOKEN, SDK_TEST_REPO, SDK_TEST_OWNER and SDK_TEST_OTHER_TOKEN (tests/integration/t_sdk_js.sh does)");

// A sandbox id that no sandbox has (ids are opaque: any unused string will do).
export const NO_SUCH_ID = "sb_doesnotexist0000000000";
