// The pre-spawn guards of bash: which commands are refused, which must run, and the exact
// prose of each refusal.
import { describe, expect, test } from "bun:test";
import { checkCommand, segments } from "../src/process/guards.ts";
import { KtError } from "../src/tools/tool.ts";

function refusal(command: string): { code: string; prose: string } | undefined {
  try {
    checkCommand(command);
    return undefined;
  } catch (error) {
    if (!(error instanceof KtError)) throw error;
    return { code: error.code, prose: error.message };
  }
}

describe("segments", () => {
  test("split on unquoted operators only, pipes marked", () => {
    const segs = segments(`a 'x && y' && b "p|q" | c; d\ne & f || g`);
    expect(segs.map((s) => s.words)).toEqual([["a", "x && y"], ["b", "p|q"], ["c"], ["d"], ["e"], ["f"], ["g"]]);
    expect(segs.map((s) => s.piped)).toEqual([false, false, true, false, false, false, false]);
  });
  test("redirections, substitutions and subshells are opaque", () => {
    expect(segments("python3 < script.py")[0]!.opaque).toBe(true);
    expect(segments("X=$(date)")[0]!.opaque).toBe(true);
    expect(segments('echo "$(date)"')[0]!.opaque).toBe(true);
    expect(segments("(cd a)")[0]!.opaque).toBe(true);
  });
  test("comments and line continuations", () => {
    expect(segments("ls \\\n -la # vim here").map((s) => s.words)).toEqual([["ls", "-la"]]);
  });
});

describe("interactive programs are refused", () => {
  const refused = [
    "vim a.txt", "vi", "nvim src/x.ts", "nano notes", "emacs -nw f", "less log.txt", "more README",
    "top", "htop", "git rebase -i main", "git -C repo rebase --interactive HEAD~3", "git add -p", "git add -ip",
    "git checkout --patch", "git commit --interactive", "python", "python3", "python3 -u", "python3.11", "node",
    "irb", "ipython", "python3 -i script.py", "node -i", "sudo vim /etc/hosts", "FOO=1 python3", "cat a | less",
    "npm test && vim a", "deno",
  ];
  for (const command of refused) {
    test(command, () => expect(refusal(command)?.code).toBe("INTERACTIVE_COMMAND"));
  }
});

describe("commands that must run", () => {
  const allowed = [
    "python3 script.py", "python3 -c 'print(1)'", "python3 -m pytest", "node index.js", "node -e 'console.log(1)'",
    "echo 'print(1)' | python3", "python3 < script.py", "python3 - <<EOF\nprint(1)\nEOF", "top -b -n 1",
    "git rebase main", "git add src/a.ts", "git commit -m 'msg'", "git log --oneline", "vim --version",
    "emacs --batch -l x.el", "vim -es -c 'q' f", "echo vim", "grep -r less src", "ls", "npm test", "cd src && npm test",
    "export A=1 && npm test", "FOO=1 npm test", "cd $(mktemp -d)", "X=$(touch f)", "cd a > log", "man ls",
  ];
  for (const command of allowed) {
    test(command, () => expect(refusal(command)).toBeUndefined());
  }
});

describe("state-only commands are refused", () => {
  for (const command of ["cd src", "cd", "export FOO=1", "FOO=1", "A=1 B=2", "cd /tmp && export A=1", "cd a; cd b", "unset X", "pushd x"]) {
    test(command, () => expect(refusal(command)?.code).toBe("STATE_ONLY_COMMAND"));
  }
});

describe("refusal prose (golden)", () => {
  // SPEC §7.4: each refusal names the same command started on a terminal.
  const drive = (command: string) =>
    `To drive it yourself, run it on a terminal: process {"action":"start","command":${JSON.stringify(command)},"tty":true}, then {"action":"read","id":"pN","screen":true} shows its screen and {"action":"write","id":"pN","input":"...","keys":["Enter"]} types into it.`;
  test("editor", () => {
    expect(refusal("vim a.txt")!.prose).toBe(
      `Refusing to run "vim a.txt": vim is an interactive editor that needs a terminal, and bash runs commands with stdin closed, so it would hang or quit. Change files with the edit and write tools, and look at them with read. ${drive("vim a.txt")}`,
    );
  });
  test("pager", () => {
    expect(refusal("less log.txt")!.prose).toBe(
      `Refusing to run "less log.txt": less is an interactive pager. Look at a file with read (offset and limit page through large ones), or run the command that produces the text on its own — output is never paged here (PAGER=cat). ${drive("less log.txt")}`,
    );
  });
  test("monitor", () => {
    expect(refusal("htop")!.prose).toBe(`Refusing to run "htop": htop is a full-screen interactive program. For a one-time snapshot use "top -b -n 1" or "ps aux". ${drive("htop")}`);
  });
  test("git", () => {
    expect(refusal("git add -p")!.prose).toBe(
      `Refusing to run "git add -p": it opens an interactive git prompt or editor, and bash has no terminal. Use the non-interactive form: "git add <paths>" instead of "git add -p", "git rebase <branch>" (or GIT_SEQUENCE_EDITOR with a script) instead of "git rebase -i". ${drive("git add -p")}`,
    );
  });
  test("repl", () => {
    expect(refusal("python3")!.prose).toBe(
      `Refusing to run "python3": without a script python3 starts an interactive REPL, and bash runs commands with stdin closed. Run a script or a one-liner instead (e.g. python3 -c '...'). ${drive("python3")}`,
    );
    expect(refusal("node")!.prose).toContain(`(e.g. node -e '...')`);
  });
  test("state only", () => {
    expect(refusal("cd src")!.prose).toBe(
      `Refusing to run "cd src": it only changes the state of the shell (working directory or variables), and every bash call starts a fresh shell, so the change would be lost when the call ends. Pass the directory as workdir instead of using cd, and set variables in the same command that uses them (e.g. "FOO=1 npm test" or "export FOO=1 && npm test").`,
    );
  });
});
