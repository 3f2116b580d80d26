/**
 * A Jest reporter beside the default one: one line per finished test file, with how many files are
 * done of how many, the file's own time and the time since the run started, so that a long
 * `npm test` shows how far it is (the default reporter's running-files display needs a terminal;
 * in CI and in a log it says nothing until a file ends, and never how many remain).
 */
class ProgressReporter {
  constructor() {
    this.total = 0;
    this.done = 0;
    this.failed = 0;
    this.started = Date.now();
  }

  onRunStart(results) {
    this.total = results.numTotalTestSuites;
    this.started = Date.now();
  }

  onTestFileResult(test, result) {
    this.done += 1;
    const failed = result.numFailingTests > 0 || result.testExecError !== undefined;
    if (failed) this.failed += 1;
    const own = ((result.perfStats.end - result.perfStats.start) / 1000).toFixed(1);
    const elapsed = Math.round((Date.now() - this.started) / 1000);
    const file = test.path.startsWith(test.context.config.rootDir) ? test.path.slice(test.context.config.rootDir.length + 1) : test.path;
    process.stderr.write(
      `progress: ${this.done}/${this.total} files (${this.failed} failed), ${elapsed} s so far: ${failed ? 'FAIL' : 'done'} ${file} in ${own} s\n`,
    );
  }
}

module.exports = ProgressReporter;
