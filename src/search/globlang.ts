// kt's glob language, for glob's pattern and grep's include: picomatch's (braces,
// extglobs, "**"), except that "[!…]" negates a class as in the shell, in rg and in
// kt's own ignore files (picomatch reads "[!a-c]" as the class {!, a, b, c}).
import picomatch from "picomatch";

/** The glob with every class opened by "[!" opened by "[^" instead. */
export function shellClasses(glob: string): string {
  if (!glob.includes("[!")) return glob;
  let out = "";
  let inClass = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") {
      out += glob.slice(i, i + 2);
      i++;
      continue;
    }
    if (!inClass && c === "[") {
      inClass = true;
      out += c;
      if (glob[i + 1] === "!") {
        out += "^";
        i++;
      }
      // A "]" right after the opening is a member, not the end.
      if (glob[i + 1] === "]") out += glob[++i];
      continue;
    }
    if (inClass && c === "]") inClass = false;
    out += c;
  }
  return out;
}

/** The test of a glob on a relative path. */
export function globTest(glob: string, options: picomatch.PicomatchOptions): (path: string) => boolean {
  return picomatch(shellClasses(glob), options);
}
