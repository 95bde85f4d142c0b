// The release archives: a gzipped ustar tarball (Linux, macOS) and a zip (Windows),
// written here rather than by the system's tar and zip so that every build machine makes
// the same bytes (fixed owner, mode and time; entries in the order given).
import { deflateRawSync, gzipSync } from "node:zlib";

export interface Entry {
  /** Path inside the archive, "/"-separated; a directory ends with "/". */
  name: string;
  data?: Uint8Array;
  mode: number;
}

const encoder = new TextEncoder();

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function tarHeader(entry: Entry, size: number, mtime: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (offset: number, text: string) => header.set(encoder.encode(text), offset);
  const name = encoder.encode(entry.name);
  if (name.length > 100) throw new Error(`tar: name over 100 bytes: ${entry.name}`);
  header.set(name, 0);
  put(100, octal(entry.mode, 8));
  put(108, octal(0, 8)); // uid
  put(116, octal(0, 8)); // gid
  put(124, octal(size, 12));
  put(136, octal(mtime, 12));
  put(148, "        "); // the checksum counts its own field as spaces
  put(156, entry.name.endsWith("/") ? "5" : "0");
  put(257, "ustar\0");
  put(263, "00");
  const sum = header.reduce((a, b) => a + b, 0);
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return header;
}

/** A .tar.gz of the entries, every one owned by 0:0 and dated mtime (seconds). */
export function tarGz(entries: Entry[], mtime: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    const data = entry.data ?? new Uint8Array(0);
    parts.push(tarHeader(entry, data.length, mtime), data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024)); // two zero blocks end the archive
  return gzipSync(Buffer.concat(parts));
}

/** MS-DOS date and time, the only timestamps a plain zip entry has (local time is not used: UTC). */
function dosTime(mtime: number): { time: number; date: number } {
  const d = new Date(mtime * 1000);
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

/** A .zip of the entries (deflated), with Unix modes so an unzip on Unix keeps them. */
export function zip(entries: Entry[], mtime: number): Uint8Array {
  const { time, date } = dosTime(mtime);
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = encoder.encode(entry.name);
    const data = entry.data ?? new Uint8Array(0);
    const isDir = entry.name.endsWith("/");
    const packed = isDir ? data : deflateRawSync(data);
    const crc = Bun.hash.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // names are UTF-8
    local.writeUInt16LE(isDir ? 0 : 8, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, spec 2.0: the external attributes hold a mode
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(isDir ? 0 : 8, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(date, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((((isDir ? 0o040000 : 0o100000) | entry.mode) << 16) | (isDir ? 0x10 : 0)) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  if (offset + centralSize > 0xffffffff) throw new Error("zip: over 4 GB needs zip64, which this writer does not do");
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}
