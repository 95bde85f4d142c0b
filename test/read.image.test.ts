// SPEC §7.5: read of a PNG, JPEG, GIF or WebP gives the model the picture: an image block
// (media type, base64 of the file's bytes, dimensions) in the envelope, in kt call's
// Anthropic and MCP shapes and from kt mcp; one line of text where only text fits.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { imageInfo } from "../src/core/image.ts";
import { call, callTool, KT, kt, MODES, ROOT, tempDir } from "./_helpers.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "images");

/** Every fixture (made with ImageMagick) and what its header declares. */
const IMAGES: Record<string, { mediaType: string; format: string; width: number; height: number }> = {
  "dot.png": { mediaType: "image/png", format: "PNG", width: 3, height: 2 },
  "photo.jpg": { mediaType: "image/jpeg", format: "JPEG", width: 5, height: 4 },
  "progressive.jpg": { mediaType: "image/jpeg", format: "JPEG", width: 13, height: 14 },
  "anim.gif": { mediaType: "image/gif", format: "GIF", width: 7, height: 3 },
  "lossy.webp": { mediaType: "image/webp", format: "WebP", width: 9, height: 6 },
  "lossless.webp": { mediaType: "image/webp", format: "WebP", width: 10, height: 5 },
  "alpha.webp": { mediaType: "image/webp", format: "WebP", width: 11, height: 12 },
};

function workspace(tmp: { path: string }) {
  const work = join(tmp.path, "work");
  mkdirSync(work);
  for (const name of Object.keys(IMAGES)) copyFileSync(join(FIXTURES, name), join(work, name));
  return { work, opts: { cwd: work, stateDir: join(tmp.path, "state") } };
}

describe("image headers", () => {
  test("every fixture's format and size, as ImageMagick wrote them", () => {
    expect(readdirSync(FIXTURES).sort()).toEqual(Object.keys(IMAGES).sort());
    for (const [name, want] of Object.entries(IMAGES)) expect(imageInfo(readFileSync(join(FIXTURES, name))), name).toEqual(want as never);
  });

  test("damaged or truncated headers are no image", () => {
    const png = readFileSync(join(FIXTURES, "dot.png"));
    expect(imageInfo(png.subarray(0, 20))).toBeNull();
    expect(imageInfo(Buffer.from("GIF89a"))).toBeNull();
    expect(imageInfo(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toBeNull();
    expect(imageInfo(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBeNull();
    expect(imageInfo(Buffer.from("hello world, not an image"))).toBeNull();
  });
});

for (const mode of MODES) {
  describe(`read of an image (${mode})`, () => {
    test("an image block with the file's bytes, and one line of text", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      for (const [name, want] of Object.entries(IMAGES)) {
        const bytes = readFileSync(join(work, name));
        const r = await call(mode, "read", { file_path: name }, opts);
        expect(r.isError, r.content).toBe(false);
        expect(r.content).toBe(`Image ${work}/${name}: ${want.format}, ${want.width}×${want.height} pixels, ${bytes.length} bytes.`);
        expect(r.image).toEqual({ type: "image", mediaType: want.mediaType as never, data: bytes.toString("base64"), width: want.width, height: want.height });
        expect(r.metadata.extra).toEqual({ path: `${work}/${name}`, mediaType: want.mediaType, width: want.width, height: want.height, bytes: bytes.length });
      }
    });

    test("the bytes decide: a PNG without an image name is an image, a .png that is not one is binary", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      copyFileSync(join(work, "dot.png"), join(work, "screenshot"));
      const unnamed = await call(mode, "read", { file_path: "screenshot" }, opts);
      expect(unnamed.image?.mediaType).toBe("image/png");
      writeFileSync(join(work, "fake.jpg"), "just text\n");
      const fake = await call(mode, "read", { file_path: "fake.jpg" }, opts);
      expect(fake.error?.code).toBe("BINARY_FILE");
      expect(fake.image).toBeUndefined();
    });

    test("over 5 MB: prose with FILE_TOO_LARGE and a way on", async () => {
      using tmp = tempDir();
      const { work, opts } = workspace(tmp);
      const png = readFileSync(join(work, "dot.png"));
      writeFileSync(join(work, "huge.png"), Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)]));
      const r = await call(mode, "read", { file_path: "huge.png" }, opts);
      expect(r.error?.code).toBe("FILE_TOO_LARGE");
      expect(r.content).toBe(`${work}/huge.png is a PNG image of 5.0 MB, over the 5 MB limit for an image shown to you. Make a smaller copy with bash (e.g. ImageMagick: convert in.png -resize 50% small.png) and read that.`);
      expect(r.image).toBeUndefined();
    });
  });
}

test("reading an image counts as reading it: it may then be overwritten", async () => {
  using tmp = tempDir();
  const { opts } = workspace(tmp);
  await callTool("read", { file_path: "dot.png" }, opts);
  const w = await callTool("write", { file_path: "dot.png", content: "replaced\n" }, opts);
  expect(w.isError, w.content).toBe(false);
});

describe("images through the adapters", () => {
  test("kt read prints the text line; kt call --format anthropic gives text and image blocks", () => {
    using tmp = tempDir();
    const { work, opts } = workspace(tmp);
    const bytes = readFileSync(join(work, "photo.jpg"));
    const line = `Image ${work}/photo.jpg: JPEG, 5×4 pixels, ${bytes.length} bytes.`;
    expect(kt(["read", "photo.jpg"], opts).stdout).toBe(`${line}\n`);
    const anthropic = kt(["call", "--format", "anthropic"], { ...opts, stdin: JSON.stringify({ type: "tool_use", id: "toolu_1", name: "read", input: { file_path: "photo.jpg" } }) });
    expect(anthropic.exitCode).toBe(0);
    expect(JSON.parse(anthropic.stdout)).toEqual({
      type: "tool_result",
      tool_use_id: "toolu_1",
      content: [
        { type: "text", text: line },
        { type: "image", source: { type: "base64", media_type: "image/jpeg", data: bytes.toString("base64") } },
      ],
      is_error: false,
    });
    // A Chat Completions tool message carries text only.
    const openai = kt(["call", "--format", "openai"], { ...opts, stdin: JSON.stringify({ id: "call_1", type: "function", function: { name: "read", arguments: '{"file_path":"photo.jpg"}' } }) });
    expect(JSON.parse(openai.stdout)).toEqual({ role: "tool", tool_call_id: "call_1", content: line });
    // A Responses API function_call_output may hold an image.
    const responses = kt(["call", "--format", "openai-responses"], { ...opts, stdin: JSON.stringify({ type: "function_call", call_id: "call_2", name: "read", arguments: '{"file_path":"photo.jpg"}' }) });
    expect(JSON.parse(responses.stdout)).toEqual({
      type: "function_call_output",
      call_id: "call_2",
      output: [
        { type: "input_text", text: line },
        { type: "input_image", image_url: `data:image/jpeg;base64,${bytes.toString("base64")}` },
      ],
    });
    const mcp = kt(["call", "--format", "mcp"], { ...opts, stdin: JSON.stringify({ name: "read", arguments: { file_path: "photo.jpg" } }) });
    expect(JSON.parse(mcp.stdout)).toEqual({ content: [{ type: "text", text: line }, { type: "image", data: bytes.toString("base64"), mimeType: "image/jpeg" }], isError: false });
  });

  test("kt mcp with the official SDK client: a valid MCP image content item", async () => {
    using tmp = tempDir();
    const { work, opts } = workspace(tmp);
    const transport = new StdioClientTransport({ command: KT, args: ["mcp"], cwd: work, env: { PATH: process.env.PATH ?? "", HOME: tmp.path, KT_STATE_DIR: opts.stateDir }, stderr: "pipe" });
    const client = new Client({ name: "kt-test", version: "0" });
    await client.connect(transport);
    try {
      for (const [name, want] of Object.entries(IMAGES)) {
        const result = await client.callTool({ name: "read", arguments: { file_path: name } });
        expect(CallToolResultSchema.safeParse(result).success).toBe(true);
        const bytes = readFileSync(join(work, name));
        expect(result.content).toEqual([
          { type: "text", text: `Image ${work}/${name}: ${want.format}, ${want.width}×${want.height} pixels, ${bytes.length} bytes.` },
          { type: "image", data: bytes.toString("base64"), mimeType: want.mediaType },
        ]);
        expect(Buffer.from((result.content as { data?: string }[])[1]!.data!, "base64").equals(bytes)).toBe(true);
      }
    } finally {
      await client.close();
    }
  });
});
