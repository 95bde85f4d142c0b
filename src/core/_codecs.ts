// iconv-lite and chardet, for src/core/encoding.ts alone. They are required from this ESM
// module, not by name, so that the bundle (`--splitting`) puts them in a chunk of their own
// that is loaded at the call: a read of a UTF-8 file never loads their 0.5 MB of tables.
export { default as iconv } from "iconv-lite";
export { analyse } from "chardet";
