"""Runs the SDK's tests and prints one line per test for the integration suite:
"ok\tNAME", "skip\tNAME\tWHY" or "fail\tNAME\tWHY" (tests/integration/t_sdk_python.sh)."""
import sys
import unittest


class Lines(unittest.TestResult):
    def _name(self, test):
        return test.id().split(".", 1)[-1]

    def addSuccess(self, test):
        print(f"ok\t{self._name(test)}", flush=True)

    def addSkip(self, test, reason):
        print(f"skip\t{self._name(test)}\t{reason}", flush=True)

    def _bad(self, test, err):
        why = self._exc_info_to_string(err, test).strip().splitlines()
        print(f"fail\t{self._name(test)}\t{' | '.join(why[-6:])[:1500]}", flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bad(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._bad(test, err)


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.discover(sys.argv[1], pattern="test_*.py")
    result = Lines()
    suite.run(result)
    sys.exit(0 if result.wasSuccessful() else 1)
