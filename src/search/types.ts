// grep's `type` filter: ripgrep's file types (rg --type-list), as file-name globs. The
// table is kt's own so that both engines, and every rg version, mean the same by a name
// (the rg engine hands these globs to rg rather than rg's built-in definitions).
import { invalidInput, KtError } from "../core/result.ts";
import { closest } from "fastest-levenshtein";

const TYPES: Record<string, readonly string[]> = {
  asm: ["*.S", "*.asm", "*.s"],
  bazel: ["*.BUILD", "*.bazel", "*.bazelrc", "*.bzl", "BUILD", "WORKSPACE"],
  c: ["*.[chH]", "*.[chH].in", "*.cats"],
  clojure: ["*.clj", "*.cljc", "*.cljs", "*.cljx"],
  cmake: ["*.cmake", "CMakeLists.txt"],
  config: ["*.cfg", "*.conf", "*.config", "*.ini"],
  cpp: ["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"],
  cs: ["*.cs"],
  css: ["*.css", "*.scss"],
  csv: ["*.csv"],
  cython: ["*.pxd", "*.pxi", "*.pyx"],
  d: ["*.d"],
  dart: ["*.dart"],
  docker: ["*Dockerfile*"],
  elixir: ["*.eex", "*.ex", "*.exs", "*.heex", "*.leex"],
  elm: ["*.elm"],
  erlang: ["*.erl", "*.hrl"],
  fish: ["*.fish"],
  fortran: ["*.F", "*.F77", "*.F90", "*.F95", "*.f", "*.f77", "*.f90", "*.f95", "*.pfo"],
  go: ["*.go"],
  gradle: ["*.gradle", "*.gradle.kts"],
  graphql: ["*.graphql", "*.graphqls"],
  groovy: ["*.gradle", "*.groovy"],
  h: ["*.h", "*.hh", "*.hpp"],
  haskell: ["*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"],
  html: ["*.ejs", "*.htm", "*.html"],
  java: ["*.java", "*.jsp", "*.jspx", "*.properties"],
  jinja: ["*.j2", "*.jinja", "*.jinja2"],
  js: ["*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"],
  json: ["*.json", "composer.lock"],
  jsonl: ["*.jsonl"],
  julia: ["*.jl"],
  jupyter: ["*.ipynb", "*.jpynb"],
  kotlin: ["*.kt", "*.kts"],
  less: ["*.less"],
  lisp: ["*.el", "*.jl", "*.lisp", "*.lsp", "*.sc", "*.scm"],
  lua: ["*.lua"],
  make: ["*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"],
  markdown: ["*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"],
  md: ["*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"],
  matlab: ["*.m"],
  nim: ["*.nim", "*.nimble", "*.nimf", "*.nims"],
  nix: ["*.nix"],
  objc: ["*.h", "*.m"],
  ocaml: ["*.ml", "*.mli", "*.mll", "*.mly"],
  pascal: ["*.dpr", "*.inc", "*.lpr", "*.pas", "*.pp"],
  perl: ["*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"],
  php: ["*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"],
  protobuf: ["*.proto"],
  ps: ["*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"],
  py: ["*.py", "*.pyi"],
  python: ["*.py", "*.pyi"],
  r: ["*.R", "*.Rmd", "*.Rnw", "*.r"],
  rst: ["*.rst"],
  ruby: ["*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"],
  rust: ["*.rs"],
  sass: ["*.sass", "*.scss"],
  scala: ["*.sbt", "*.scala"],
  sh: ["*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"],
  solidity: ["*.sol"],
  sql: ["*.psql", "*.sql"],
  svelte: ["*.svelte"],
  swift: ["*.swift"],
  tex: ["*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"],
  tf: ["*.tf", "*.tf.json", "*.tfvars"],
  toml: ["*.toml", "Cargo.lock"],
  ts: ["*.cts", "*.mts", "*.ts", "*.tsx"],
  typescript: ["*.cts", "*.mts", "*.ts", "*.tsx"],
  txt: ["*.txt"],
  vim: ["*.vim", ".gvimrc", ".vimrc", "_gvimrc", "_vimrc"],
  vue: ["*.vue"],
  xml: ["*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"],
  yaml: ["*.yaml", "*.yml"],
  zig: ["*.zig"],
  zsh: ["*.zsh", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"],
};

/** The file-name globs of a type, or INVALID_ARGS naming the nearest known type. */
export function typeGlobs(name: string): readonly string[] {
  const globs = Object.hasOwn(TYPES, name) ? TYPES[name] : undefined;
  if (globs) return globs;
  const lower = name.toLowerCase();
  const near = Object.hasOwn(TYPES, lower) ? lower : closest(lower, Object.keys(TYPES));
  throw new KtError(
    "INVALID_ARGS",
    invalidInput(
      "grep",
      `type "${name}" is not a known file type${near ? ` (did you mean "${near}"?)` : ""}`,
      `Use one of ripgrep's type names, e.g. py, js, ts, rust, go, java, c, cpp, md, json, yaml, sh — or filter by file name with include (e.g. "*.ext").`,
    ),
  );
}
