// Pictures a model can be shown (SPEC §7.5): PNG, JPEG, GIF and WebP, told apart by their
// first bytes (never by the name alone), with the width and height their headers declare.
// Only headers are parsed: kt hands the bytes on as they are and never decodes pixels.

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

export interface ImageInfo {
  mediaType: ImageMediaType;
  /** Short name for prose: "PNG". */
  format: string;
  width: number;
  height: number;
}

/** Largest image handed to a model; larger ones are refused with prose (Anthropic's API limit per image). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** File name extensions read as images (the bytes must agree). */
export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(["png", "jpg", "jpeg", "gif", "webp"]);

/** The image `bytes` hold, or null when they are none of the four formats or their header is damaged. */
export function imageInfo(bytes: Uint8Array): ImageInfo | null {
  if (starts(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return png(bytes);
  if (starts(bytes, [0xff, 0xd8, 0xff])) return jpeg(bytes);
  if (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a") return gif(bytes);
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return webp(bytes);
  return null;
}

/** True when the first bytes are those of one of the four formats (the header may still be damaged). */
export function looksLikeImage(head: Uint8Array): boolean {
  return (
    starts(head, [0x89, 0x50, 0x4e, 0x47]) ||
    starts(head, [0xff, 0xd8, 0xff]) ||
    ascii(head, 0, 4) === "GIF8" ||
    (ascii(head, 0, 4) === "RIFF" && ascii(head, 8, 4) === "WEBP")
  );
}

function png(b: Uint8Array): ImageInfo | null {
  if (b.length < 24 || ascii(b, 12, 4) !== "IHDR") return null;
  return sized("image/png", "PNG", be32(b, 16), be32(b, 20));
}

function gif(b: Uint8Array): ImageInfo | null {
  if (b.length < 10) return null;
  return sized("image/gif", "GIF", b[6]! | (b[7]! << 8), b[8]! | (b[9]! << 8));
}

/** The frame size is in the first start-of-frame segment; every segment before it says how long it is. */
function jpeg(b: Uint8Array): ImageInfo | null {
  let i = 2;
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2; // no length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan data before any frame header
    const length = be16(b, i + 2);
    if (length < 2) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (i + 9 > b.length) return null;
      return sized("image/jpeg", "JPEG", be16(b, i + 7), be16(b, i + 5));
    }
    i += 2 + length;
  }
  return null;
}

function webp(b: Uint8Array): ImageInfo | null {
  const chunk = ascii(b, 12, 4);
  if (chunk === "VP8 ") {
    // Lossy: a key frame's start code, then 14-bit width and height.
    if (b.length < 30 || b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return sized("image/webp", "WebP", le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff);
  }
  if (chunk === "VP8L") {
    // Lossless: a signature byte, then width−1 and height−1 in 14 bits each.
    if (b.length < 25 || b[20] !== 0x2f) return null;
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return sized("image/webp", "WebP", (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === "VP8X") {
    // Extended: the canvas, width−1 and height−1 in 24 bits each.
    if (b.length < 30) return null;
    return sized("image/webp", "WebP", le24(b, 24) + 1, le24(b, 27) + 1);
  }
  return null;
}

function sized(mediaType: ImageMediaType, format: string, width: number, height: number): ImageInfo | null {
  return width > 0 && height > 0 ? { mediaType, format, width, height } : null;
}

// Plain loops: every read of a file asks whether it is an image, and spreading a typed array
// or a first Array.prototype.every costs that one-shot call more than the answer.
function starts(b: Uint8Array, sig: readonly number[]): boolean {
  if (b.length < sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[i] !== sig[i]) return false;
  return true;
}

function ascii(b: Uint8Array, at: number, length: number): string {
  if (b.length < at + length) return "";
  let text = "";
  for (let i = at; i < at + length; i++) text += String.fromCharCode(b[i]!);
  return text;
}

function be16(b: Uint8Array, at: number): number {
  return (b[at]! << 8) | b[at + 1]!;
}

function be32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) >>> 0) + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
}

function le16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}

function le24(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
}
