// The servers kt knows (SPEC §8.1), as data: which files each covers, the markers of its
// project root, how to install it. Loaded by every write and edit to ask "could a server
// cover this file?" from the extension alone, so it imports nothing and does no I/O; finding
// the executable and the root is locate.ts's work, done only for covered files.

export interface ServerEntry {
  /** The table's key, also the name .kt/lsp.json overrides it by. */
  id: string;
  /** The language as prose names it. */
  language: string;
  /** Executable name (looked up on PATH and in node_modules/.bin) or a path. */
  command: string;
  args: readonly string[];
  /** File extensions with the dot, lower case. */
  extensions: readonly string[];
  /** Files or directories whose presence makes a directory the project root. */
  rootMarkers: readonly string[];
  /** How a person installs it: one line for NO_LANGUAGE_SERVER prose. */
  install: string;
  initializationOptions?: Record<string, unknown>;
  settings?: Record<string, unknown>;
  /** Only from the project's node_modules/.bin, never PATH (a `tsc` on PATH may be TypeScript 5, which has no --lsp). */
  projectOnly?: boolean;
}

const TS_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const TS_MARKERS = ["tsconfig.json", "jsconfig.json", "package.json"];
const PY_EXTENSIONS = [".py", ".pyi"];
const PY_MARKERS = ["pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg", "requirements.txt", "Pipfile"];

/** In the order they are tried: the first one found serves the file. */
export const BUILTIN: readonly ServerEntry[] = [
  {
    id: "typescript-language-server",
    language: "TypeScript/JavaScript",
    command: "typescript-language-server",
    args: ["--stdio"],
    extensions: TS_EXTENSIONS,
    rootMarkers: TS_MARKERS,
    install: "npm install --save-dev typescript-language-server typescript@5 (it drives TypeScript 5's tsserver)",
    // A rename renames: no "x as y" aliases left behind to keep old names alive.
    initializationOptions: { preferences: { providePrefixAndSuffixTextForRename: false } },
  },
  {
    // TypeScript 7's native compiler has no tsserver but speaks LSP itself.
    id: "tsgo",
    language: "TypeScript/JavaScript",
    command: "tsc",
    args: ["--lsp", "--stdio"],
    extensions: TS_EXTENSIONS,
    rootMarkers: TS_MARKERS,
    install: "npm install --save-dev typescript@7 (its native tsc has a language server: tsc --lsp --stdio)",
    projectOnly: true,
  },
  {
    id: "pyright",
    language: "Python",
    command: "pyright-langserver",
    args: ["--stdio"],
    extensions: PY_EXTENSIONS,
    rootMarkers: PY_MARKERS,
    install: "npm install -g pyright (or pip install pyright)",
  },
  {
    id: "basedpyright",
    language: "Python",
    command: "basedpyright-langserver",
    args: ["--stdio"],
    extensions: PY_EXTENSIONS,
    rootMarkers: PY_MARKERS,
    install: "pip install basedpyright",
  },
  {
    id: "pylsp",
    language: "Python",
    command: "pylsp",
    args: [],
    extensions: PY_EXTENSIONS,
    rootMarkers: PY_MARKERS,
    install: "pip install python-lsp-server",
  },
  {
    id: "gopls",
    language: "Go",
    command: "gopls",
    args: [],
    extensions: [".go"],
    rootMarkers: ["go.work", "go.mod"],
    install: "go install golang.org/x/tools/gopls@latest (or apt install gopls)",
    // The type-checked diagnostics at once, not after gopls's default 1 s delay.
    initializationOptions: { diagnosticsDelay: "0s" },
    settings: { gopls: { diagnosticsDelay: "0s" } },
  },
  {
    id: "rust-analyzer",
    language: "Rust",
    command: "rust-analyzer",
    args: [],
    extensions: [".rs"],
    rootMarkers: ["Cargo.toml"],
    install: "rustup component add rust-analyzer",
  },
  {
    id: "clangd",
    language: "C/C++",
    command: "clangd",
    args: ["--log=error"],
    extensions: [".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".m", ".mm"],
    rootMarkers: ["compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt", "Makefile", "meson.build"],
    install: "apt install clangd (or brew install llvm; or your distribution's clangd package)",
  },
];

const LANGUAGE_IDS: Readonly<Record<string, string>> = {
  ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
  ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
  ".py": "python", ".pyi": "python", ".go": "go", ".rs": "rust",
  ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
  ".m": "objective-c", ".mm": "objective-cpp",
};

/** The protocol's languageId for a file's extension. */
export function languageId(ext: string): string {
  return LANGUAGE_IDS[ext] ?? ext.slice(1);
}

const BUILTIN_EXTENSIONS = new Set(BUILTIN.flatMap((e) => e.extensions));

/** The extension of a path, lower case, with its dot ("" when none). */
export function extensionOf(path: string): string {
  const slash = path.lastIndexOf("/");
  const dot = path.lastIndexOf(".");
  return dot > slash + 1 ? path.slice(dot).toLowerCase() : "";
}

/** Whether a built-in server could cover a file with this extension: no I/O. */
export function builtinCovers(ext: string): boolean {
  return BUILTIN_EXTENSIONS.has(ext);
}
