// Loads every page of a `repro report --html` folder in headless Chromium and prints one JSON
// object: the problems found (console errors, page errors, failed requests, images that do not
// resolve, links to files that do not exist) and the dashboard's first table (index.html) as
// cell texts. Usage: node check_pages.mjs <html folder> <chromium executable>
import { readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [dir, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
const page = await browser.newPage();
const problems = [];
let current = "";
page.on("console", (m) => {
  if (m.type() === "error") problems.push(`${current}: console error: ${m.text()}`);
});
page.on("pageerror", (e) => problems.push(`${current}: page error: ${e}`));
page.on("requestfailed", (r) => problems.push(`${current}: request failed: ${r.url()}`));

const pages = {};
const ids = {};
const anchored = [];
let counts = null;
for (const file of readdirSync(dir).filter((f) => f.endsWith(".html")).sort()) {
  current = file;
  await page.goto(pathToFileURL(join(dir, file)).href, { waitUntil: "load" });
  const images = await page.$$eval("img", (all) =>
    all.map((i) => ({ src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0 })),
  );
  for (const i of images) if (!i.ok) problems.push(`${file}: image ${i.src} does not resolve`);
  const links = await page.$$eval("a[href]", (all) => all.map((a) => a.getAttribute("href")));
  for (const href of links) {
    if (/^[a-z]+:/i.test(href)) continue;
    const [target, anchor] = href.split("#");
    const path = target === "" ? file : target;
    if (!existsSync(join(dir, path))) problems.push(`${file}: link ${href}: no ${path}`);
    else if (anchor) anchored.push([file, href, path, anchor]);
  }
  ids[file] = new Set(await page.$$eval("[id]", (all) => all.map((e) => e.id)));
  pages[file] = { images: images.length, links: links.length, title: await page.title() };
  if (file === "index.html") {
    counts = await page.$$eval("table", (tables) =>
      tables.length === 0 ? null : [...tables[0].rows].map((r) => [...r.cells].map((c) => c.textContent.trim())),
    );
  }
}
await browser.close();
for (const [file, href, path, anchor] of anchored) {
  if (ids[path] && !ids[path].has(anchor)) problems.push(`${file}: link ${href}: no element with that id`);
}
console.log(JSON.stringify({ problems, pages, counts }));
