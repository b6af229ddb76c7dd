// Shared helpers of the end-to-end clients: checks that count failures, and
// the permission policy both clients apply.
let passed = 0;
let failed = 0;

export function check(ok, what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    console.error(`FAIL: ${what}`);
  }
}

export function checkEq(got, want, what) {
  check(got === want, `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

// decide allows a change to a file named allowed.txt and rejects anything
// else, so that one scenario sees an approval and another a rejection.
export function decide(params) {
  const path = params.toolCall?.rawInput?.path ?? "";
  const optionId = path.endsWith("allowed.txt") ? "allow_once" : "reject_once";
  return { outcome: { outcome: "selected", optionId } };
}

// summary prints the totals and returns the number of failures.
export function summary(name) {
  console.log(`${name}: ${passed} passed, ${failed} failed`);
  return failed;
}
