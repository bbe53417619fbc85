/**
 * Reads tap's TAP stream as it goes by and keeps, for every failed assertion, the test file, the subtest path
 * and its YAML diagnostics. CI shows only the tail of the output, so the runner prints this digest last: a red
 * run then says what failed without scrolling through thousands of `ok` lines.
 */

export interface Failure {
  file: string;
  path: string[];
  diagnostics: string[];
}

const SUBTEST = /^(\s*)# Subtest: (.*)$/;
const NOT_OK = /^(\s*)not ok \d+ - (.*?)(?: # time=.*)?$/;

export class FailureDigest {
  readonly failures: Failure[] = [];
  private pending = '';
  /** Subtest names by depth (4 spaces of indentation per level). */
  private names: string[] = [];
  /** failedBelow[d]: some result at depth d failed since the enclosing subtest began. */
  private failedBelow: boolean[] = [];
  private open: { indent: string; failure: Failure } | undefined;

  push(chunk: string): void {
    const lines = (this.pending + chunk).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    if (this.open) {
      const { indent, failure } = this.open;
      if (line.startsWith(`${indent}  `)) {
        const body = line.slice(indent.length + 2);
        if (body === '...') this.open = undefined;
        else if (body !== '---' && failure.diagnostics.length < 30) failure.diagnostics.push(body);
        return;
      }
      this.open = undefined;
    }
    const sub = SUBTEST.exec(line);
    if (sub) {
      const depth = sub[1].length / 4;
      this.names.length = depth;
      this.names[depth] = sub[2];
      this.failedBelow.length = depth + 1;
      return;
    }
    const bad = NOT_OK.exec(line);
    if (!bad) return;
    const depth = bad[1].length / 4;
    const restatesChild = this.failedBelow[depth + 1] === true;
    this.failedBelow[depth] = true;
    // A parent fails because a child did; its own block only points at the t.test call. Keep the child's.
    if (restatesChild) return;
    const failure: Failure = {
      file: this.names[0] ?? bad[2],
      path: [...this.names.slice(1, depth), bad[2]],
      diagnostics: [],
    };
    this.failures.push(failure);
    this.open = { indent: bad[1], failure };
  }

  report(): string {
    if (!this.failures.length) return '';
    const out = [`\n${this.failures.length} failure(s):`];
    for (const f of this.failures) {
      out.push(`\n✗ ${f.file} › ${f.path.join(' › ')}`);
      for (const d of f.diagnostics) out.push(`    ${d}`);
    }
    return `${out.join('\n')}\n`;
  }
}
