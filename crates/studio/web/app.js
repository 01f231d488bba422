// procmodel studio page: scene tree, properties from the generators' Attributes, a three.js
// viewport drawing the server's instanced batches, and the window.__studio test/latency hook.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/OrbitControls.js';

const params = new URLSearchParams(location.search);
const TEST = params.has('test');
const $ = (id) => document.getElementById(id);

// ----- viewport -------------------------------------------------------------------------
const container = $('viewport');
const renderer = new THREE.WebGLRenderer({ antialias: !TEST, preserveDrawingBuffer: false });
renderer.setPixelRatio(TEST ? 1 : window.devicePixelRatio);
container.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const BACKGROUND = new THREE.Color(0x30343b);
scene.background = BACKGROUND;
const camera = new THREE.PerspectiveCamera(50, 1, 0.1, 20000);
camera.position.set(30, 24, 30);
const controls = new OrbitControls(camera, renderer.domElement);
controls.enableDamping = !TEST;
controls.zoomToCursor = true;
scene.add(new THREE.HemisphereLight(0xdde6ff, 0x444038, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 2.0);
sun.position.set(40, 80, 25);
scene.add(sun);
const grid = new THREE.GridHelper(256, 64, 0x666a72, 0x454950);
scene.add(grid);
const axes = new THREE.AxesHelper(4);
scene.add(axes);
const content = new THREE.Group();
scene.add(content);
const sizeBox = new THREE.Box3Helper(new THREE.Box3(), 0xffcc33);
sizeBox.visible = false;
scene.add(sizeBox);
// The selected instance's parts (when it is not the model itself, which the Size box shows).
const selectionBox = new THREE.Box3Helper(new THREE.Box3(), 0x4da3ff);
selectionBox.visible = false;
scene.add(selectionBox);

// The viewport is rendered only when this is set (see `loop`).
let needsRender = true;
function resize() {
  needsRender = true;
  const w = container.clientWidth || 640, h = container.clientHeight || 480;
  renderer.setSize(w, h, true);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}
new ResizeObserver(resize).observe(container);
resize();

const gl = renderer.getContext();
const dbg = gl.getExtension('WEBGL_debug_renderer_info');
const rendererName = dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);

// Unit geometries per shape (the instance matrix scales them to the part's size).
function wedgeGeometry(corner) {
  const g = new THREE.BufferGeometry();
  const v = corner
    ? [ // bottom rectangle, apex above (+X, +Y, -Z)
      [-.5, -.5, -.5], [.5, -.5, -.5], [.5, -.5, .5], [-.5, -.5, .5], [.5, .5, -.5]]
    : [ // bottom rectangle, top-back edge
      [-.5, -.5, -.5], [.5, -.5, -.5], [.5, -.5, .5], [-.5, -.5, .5], [-.5, .5, .5], [.5, .5, .5]];
  const faces = corner
    ? [[0, 1, 2], [0, 2, 3], [1, 4, 2], [0, 4, 1], [2, 4, 3], [3, 4, 0]]
    : [[0, 1, 2], [0, 2, 3], [3, 2, 5], [3, 5, 4], [0, 4, 5], [0, 5, 1], [0, 3, 4], [1, 5, 2]];
  const pos = [];
  for (const f of faces) for (const i of f) pos.push(...v[i]);
  g.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
  g.computeVertexNormals();
  // Faces were listed by hand; make them all face outwards.
  const p = g.attributes.position, n = g.attributes.normal;
  for (let i = 0; i < p.count; i += 3) {
    const cx = (p.getX(i) + p.getX(i + 1) + p.getX(i + 2)) / 3, cy = (p.getY(i) + p.getY(i + 1) + p.getY(i + 2)) / 3, cz = (p.getZ(i) + p.getZ(i + 1) + p.getZ(i + 2)) / 3;
    if (cx * n.getX(i) + cy * n.getY(i) + cz * n.getZ(i) < 0) {
      const x1 = p.getX(i + 1), y1 = p.getY(i + 1), z1 = p.getZ(i + 1);
      p.setXYZ(i + 1, p.getX(i + 2), p.getY(i + 2), p.getZ(i + 2));
      p.setXYZ(i + 2, x1, y1, z1);
    }
  }
  g.computeVertexNormals();
  return g;
}
// A SpecialMesh Head in the unit box: the profile procmodel-mesh's `head` revolves (flat
// discs of half the radius, quarter-circle edges, straight sides over half the height).
function headGeometry() {
  const points = [new THREE.Vector2(0, -0.5)];
  for (const [cy, from, to] of [[-0.25, -Math.PI / 2, 0], [0.25, 0, Math.PI / 2]]) {
    for (let i = 0; i <= 4; i++) {
      const a = from + ((to - from) * i) / 4;
      points.push(new THREE.Vector2(0.25 + 0.25 * Math.cos(a), cy + 0.25 * Math.sin(a)));
    }
  }
  points.push(new THREE.Vector2(0, 0.5));
  const g = new THREE.LatheGeometry(points, 24);
  g.computeVertexNormals();
  return g;
}
const cylinder = new THREE.CylinderGeometry(0.5, 0.5, 1, 24);
cylinder.rotateZ(-Math.PI / 2);
const GEOMETRY = {
  Block: new THREE.BoxGeometry(1, 1, 1),
  Ball: new THREE.SphereGeometry(0.5, 24, 12),
  Cylinder: cylinder,
  Wedge: wedgeGeometry(false),
  CornerWedge: wedgeGeometry(true),
  // Mesh children (SpecialMesh Sphere, CylinderMesh): the instance matrix stretches these.
  Ellipsoid: new THREE.SphereGeometry(0.5, 24, 12),
  UprightCylinder: new THREE.CylinderGeometry(0.5, 0.5, 1, 24),
  Head: headGeometry(),
};
// The script-built meshes of the last frame (a Mesh batch's `mesh` indexes them).
let meshGeometries = [];
const geometryOf = (b) => b.geometry || GEOMETRY[b.shape] || GEOMETRY.Block;
const TRIANGLES = Object.fromEntries(Object.entries(GEOMETRY).map(([k, g]) => [k, (g.index ? g.index.count : g.attributes.position.count) / 3]));

// Enum.Material values → PBR approximations.
const METAL = new Set([1040, 1056, 1088, 1072]);
function materialOptions(value, transparency, ghost) {
  const o = {
    roughness: value === 272 || value === 1568 ? 0.3 : METAL.has(value) ? 0.35 : 0.75,
    metalness: METAL.has(value) ? 0.8 : 0.0,
    wireframe,
  };
  if (value === 288) o.emissive = new THREE.Color(0.3, 0.3, 0.3); // Neon
  const alpha = ghost ? 0.22 : 1 - transparency;
  if (alpha < 1) Object.assign(o, { transparent: true, opacity: alpha, depthWrite: false });
  return o;
}
let wireframe = false;

// ----- state --------------------------------------------------------------------------
let state = null;           // the latest scene header
let selected = null;        // selected node index
let selectedPath = null;    // ids of the selected node and its ancestors (to find it again)
let lastGood = new Map();   // model id → batches of its last successful generation (ghosts)
let meshes = [];            // the meshes drawn now (entries of `pool`)
const stats = {
  frames: 0, renderer: rendererName, instances: 0, parts: 0, triangles: 0, drawCalls: 0,
  revision: 0, seqSent: 0, seqApplied: 0, seqPresented: 0, history: [], errors: [], fps: 0,
  terrain: { id: 0, triangles: 0, parts: 0 }, renders: 0, generationMs: 0, generationCached: false,
  output: 0,
};
const timings = new Map(); // seq → timestamps
const outstanding = new Map(); // seq → send time, until a frame or an answer includes it
const waiters = [];
let seq = 0;
let ws = null;
const MAX_MESSAGE = 1 << 20; // the server's limit (server.rs)
let retry = 250;

function connect() {
  ws = new WebSocket(`ws://${location.host}/ws`);
  ws.binaryType = 'arraybuffer';
  // A new connection is sent every Output line the server keeps: start the panel afresh.
  ws.onopen = () => { retry = 250; status(); $('output-lines').replaceChildren(); };
  ws.onclose = () => { outstanding.clear(); status('disconnected — reconnecting…'); setTimeout(connect, retry); retry = Math.min(retry * 2, 4000); };
  ws.onmessage = (ev) => {
    const t = performance.now();
    if (typeof ev.data === 'string') return onText(JSON.parse(ev.data));
    onScene(ev.data, t);
  };
}

function send(msg) {
  msg.seq = ++seq;
  const tm = timings.get(msg.seq) || { t_input: performance.now() };
  tm.t_send = performance.now();
  timings.set(msg.seq, tm);
  stats.seqSent = msg.seq;
  outstanding.set(msg.seq, tm.t_send);
  const text = JSON.stringify(msg);
  // The server takes messages up to 1 MiB and drops the connection on a larger one.
  if (text.length > MAX_MESSAGE) {
    outstanding.delete(msg.seq);
    toast(`the edit was not sent: ${Math.round(text.length / 1024)} KiB is more than the studio takes (1 MiB)`);
  } else if (ws && ws.readyState === 1) ws.send(text);
  else toast('not connected: the edit was not sent');
  return msg.seq;
}

function onText(m) {
  if (m.seq != null) outstanding.delete(m.seq);
  if (m.type === 'error') {
    stats.errors.push(m);
    toast(m.message);
    // A refused edit never gets a frame: its waiters learn why instead.
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i].seq === m.seq) { waiters[i].resolve({ error: m.message }); waiters.splice(i, 1); }
  } else if (m.type === 'saved') {
    toast(`saved ${m.path}`, true);
    stats.saved = m.path;
  } else if (m.type === 'info') {
    toast(m.message, true);
  } else if (m.type === 'output') {
    onOutput(m);
  }
}

// The Output panel: what generators printed and why a generation failed, as Roblox
// Studio's Output window shows them (the newest OUTPUT_KEPT lines).
const OUTPUT_KEPT = 1000;
let outputUnseen = 0;
function outputLine(cls, text) {
  const el = document.createElement('div');
  el.className = cls;
  el.textContent = text;
  return el;
}
function onOutput(m) {
  const box = $('output-lines');
  const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
  const frag = document.createDocumentFragment();
  if (m.skipped > 0) frag.appendChild(outputLine('skipped', `… ${m.skipped} earlier lines not kept`));
  for (const l of m.lines) frag.appendChild(outputLine(l.level, l.text));
  box.appendChild(frag);
  while (box.childElementCount > OUTPUT_KEPT) box.firstElementChild.remove();
  stats.output += m.lines.length;
  if ($('output').classList.contains('collapsed')) {
    outputUnseen += m.lines.length;
    $('output-count').textContent = `(${outputUnseen} new)`;
  }
  if (atEnd) box.scrollTop = box.scrollHeight;
}
$('output-toggle').onclick = () => {
  const panel = $('output');
  panel.classList.toggle('collapsed');
  if (!panel.classList.contains('collapsed')) { outputUnseen = 0; $('output-count').textContent = ''; }
};
$('output-clear').onclick = () => { $('output-lines').replaceChildren(); outputUnseen = 0; $('output-count').textContent = ''; };

let toastTimer = 0;
function toast(text, ok) {
  const el = $('toast');
  el.textContent = text;
  el.style.background = ok ? '#20452a' : '';
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

function onScene(buf, tMsg) {
  const dv = new DataView(buf);
  const magic = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
  if (magic === 'PMT1') return onTerrain(buf, dv);
  if (magic !== 'PMF1') return toast('bad frame from the server');
  const hlen = dv.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, hlen)));
  const sc = header.scene;
  let off = 8 + hlen;
  // Slice the body into batches.
  const batches = sc.batches.map((b) => {
    const n = b.count;
    const matrices = new Float32Array(buf, off, n * 16); off += n * 64;
    const colors = new Float32Array(buf, off, n * 3); off += n * 12;
    const ids = new Uint32Array(buf, off, n); off += n * 4;
    return { ...b, matrices, colors, ids };
  });
  // Then the script-built meshes the Mesh batches draw (unit box; vertex colours; a textured
  // one's UVs and PNG, decoded off the frame: it shows when the image is ready).
  for (const g of meshGeometries) {
    if (g.userData.map) g.userData.map.dispose();
    g.dispose();
  }
  meshGeometries = (sc.meshes || []).map((m) => {
    const g = new THREE.BufferGeometry();
    const v = m.vertices;
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(buf.slice(off, off + v * 12)), 3)); off += v * 12;
    g.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(buf.slice(off, off + v * 12)), 3)); off += v * 12;
    g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(buf.slice(off, off + v * 12)), 3)); off += v * 12;
    g.setIndex(new THREE.BufferAttribute(new Uint32Array(buf.slice(off, off + m.indices * 4)), 1)); off += m.indices * 4;
    if (m.texture > 0) {
      g.setAttribute('uv', new THREE.BufferAttribute(new Float32Array(buf.slice(off, off + v * 8)), 2)); off += v * 8;
      const png = new Blob([new Uint8Array(buf, off, m.texture)], { type: 'image/png' });
      off += Math.ceil(m.texture / 4) * 4;
      // UV (0, 0) is the image's top-left pixel (Roblox and glTF): no flip.
      const map = new THREE.Texture();
      map.flipY = false;
      map.colorSpace = THREE.SRGBColorSpace;
      map.userData.seeThrough = m.see_through;
      g.userData.map = map;
      createImageBitmap(png).then((bitmap) => {
        map.image = bitmap;
        map.needsUpdate = true;
        needsRender = true;
      }, () => toast('a texture in the frame is not an image'));
    }
    g.computeBoundingSphere();
    return g;
  });
  for (const b of batches) if (b.shape === 'Mesh') b.geometry = meshGeometries[b.mesh];
  state = sc;
  // The last generation's time (a frame without one, e.g. an undo, keeps showing it).
  if (sc.reports.length) {
    stats.generationMs = sc.timing.gen_ms;
    // Results from the result cache: nothing ran (and nothing printed).
    stats.generationCached = sc.reports.every((r) => r.cached);
    // A run that made instances but left its results empty (a misspelled targetContainer).
    const warned = sc.reports.find((r) => r.warning);
    if (warned) toast(`${warned.path}: ${warned.warning}`);
  }
  reselect();
  stats.revision = sc.revision;
  stats.instances = sc.instances;
  stats.parts = sc.parts;
  applyScene(sc, batches);
  needsRender = true;
  const tApplied = performance.now();
  for (const s of header.seqs) {
    const tm = timings.get(s.seq) || {};
    Object.assign(tm, { t_msg: tMsg, t_applied: tApplied, server_ms: s.server_ms, gen_ms: s.gen_ms, encode_ms: sc.timing.encode_ms, parts: sc.parts, pendingPresent: true });
    timings.set(s.seq, tm);
    stats.seqApplied = Math.max(stats.seqApplied, s.seq);
    outstanding.delete(s.seq);
  }
  renderTree();
  renderProperties();
  renderOverlay();
  status();
}

// Workspace.Terrain: one mesh per material, replaced when the server sends a new one.
let terrainMeshes = [];
function onTerrain(buf, dv) {
  const hlen = dv.getUint32(4, true);
  const t = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, hlen))).terrain;
  for (const m of terrainMeshes) { content.remove(m); m.geometry.dispose(); m.material.dispose(); }
  terrainMeshes = [];
  let off = 8 + hlen;
  for (const p of t.parts) {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(buf.slice(off, off + p.vertices * 12)), 3)); off += p.vertices * 12;
    g.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(buf.slice(off, off + p.vertices * 12)), 3)); off += p.vertices * 12;
    g.setIndex(new THREE.BufferAttribute(new Uint32Array(buf.slice(off, off + p.indices * 4)), 1)); off += p.indices * 4;
    g.computeBoundingBox(); g.computeBoundingSphere();
    const water = p.material === 'Water';
    const m = new THREE.MeshStandardMaterial({ color: new THREE.Color(...p.color), roughness: water ? 0.2 : 0.95, wireframe, transparent: p.opacity < 1, opacity: p.opacity, depthWrite: p.opacity >= 1 });
    const mesh = new THREE.Mesh(g, m);
    mesh.userData = { terrain: p.material };
    content.add(mesh);
    terrainMeshes.push(mesh);
  }
  stats.terrain = { id: t.id, triangles: t.triangles, parts: t.parts.length };
  needsRender = true;
  if (t.error) toast(`terrain: ${t.error}`);
  if (!framedOnce && t.triangles > 0) { frameAll(); framedOnce = true; }
}

// Drawing parts. SwiftShader (software WebGL) pays per instance of an instanced draw,
// about as much as for a small draw call, so flat-faced shapes (Block, Wedge, CornerWedge:
// a few dozen vertices, most parts of most models) are drawn by vertex pulling instead: one
// plain draw of a geometry holding the unit shape once per part, whose vertex shader reads
// its part's matrix and colour from a float texture (the same 64 bytes per part as
// instancing uploads). Balls and Cylinders, with hundreds of vertices, stay instanced.
// Meshes, materials, textures and buffers are kept per batch key and reused frame to frame
// (a frame uploads part data, it does not build GPU objects).
const PULLED = new Set(['Block', 'Wedge', 'CornerWedge']);
const ROW_PARTS = 256; // parts per texture row (4 RGBA float texels each)

// The unit shape repeated for `capacity` parts (grown by doubling, shared by all batches of
// the shape: only the draw range differs).
const tiles = new Map();
function tileOf(shape, n) {
  const t = tiles.get(shape);
  if (t && t.capacity >= n) return t;
  const base = GEOMETRY[shape];
  const nv = base.attributes.position.count;
  const idx = base.index ? base.index.array : Array.from({ length: nv }, (_, i) => i);
  const capacity = Math.max(1024, 2 ** Math.ceil(Math.log2(n)));
  const pos = new Float32Array(capacity * nv * 3), nor = new Float32Array(capacity * nv * 3);
  const ind = new Uint32Array(capacity * idx.length);
  const bp = base.attributes.position.array, bn = base.attributes.normal.array;
  for (let i = 0; i < capacity; i++) {
    pos.set(bp, i * nv * 3); nor.set(bn, i * nv * 3);
    for (let j = 0; j < idx.length; j++) ind[i * idx.length + j] = idx[j] + i * nv;
  }
  if (t) { // free the old buffers (disposing a geometry that holds them removes them)
    const old = new THREE.BufferGeometry();
    old.setAttribute('position', t.position); old.setAttribute('normal', t.normal); old.setIndex(t.index);
    old.dispose();
  }
  const tile = {
    capacity, vertices: nv, indices: idx.length,
    position: new THREE.BufferAttribute(pos, 3), normal: new THREE.BufferAttribute(nor, 3), index: new THREE.BufferAttribute(ind, 1),
  };
  tiles.set(shape, tile);
  return tile;
}

// A MeshStandardMaterial whose vertex shader takes its part's transform and colour from
// `partData` (texel 4k..4k+3 of part k: the matrix's columns, colour in their w).
function pulledMaterial(value, transparency, ghost, vertices) {
  const m = new THREE.MeshStandardMaterial(materialOptions(value, transparency, ghost));
  m.vertexColors = true;
  const partData = { value: null };
  m.userData.partData = partData;
  m.onBeforeCompile = (sh) => {
    sh.uniforms.partData = partData;
    sh.uniforms.partVertices = { value: vertices };
    sh.vertexShader = 'uniform highp sampler2D partData;\nuniform int partVertices;\n' + sh.vertexShader
      .replace('#include <color_vertex>', `
        int part = gl_VertexID / partVertices;
        ivec2 at = ivec2((part % ${ROW_PARTS}) * 4, part / ${ROW_PARTS});
        vec4 c0 = texelFetch(partData, at, 0), c1 = texelFetch(partData, at + ivec2(1, 0), 0);
        vec4 c2 = texelFetch(partData, at + ivec2(2, 0), 0), c3 = texelFetch(partData, at + ivec2(3, 0), 0);
        mat4 partMatrix = mat4(vec4(c0.xyz, 0.0), vec4(c1.xyz, 0.0), vec4(c2.xyz, 0.0), vec4(c3.xyz, 1.0));
        vColor = vec4(c0.w, c1.w, c2.w, 1.0);`)
      .replace('#include <beginnormal_vertex>', `
        vec3 objectNormal = vec3(normal);
        {
          mat3 pm = mat3(partMatrix);
          objectNormal /= vec3(dot(pm[0], pm[0]), dot(pm[1], pm[1]), dot(pm[2], pm[2]));
          objectNormal = pm * objectNormal;
        }`)
      .replace('#include <begin_vertex>', 'vec3 transformed = (partMatrix * vec4(position, 1.0)).xyz;');
  };
  m.customProgramCacheKey = () => 'procmodel-pulled-parts';
  return m;
}

const pool = new Map(); // batch key → { mesh, pulled, capacity, texture, data }
function entryFor(key, b, ghost) {
  let e = pool.get(key);
  const pulled = PULLED.has(b.shape);
  if (pulled) {
    if (!e) {
      const tile = tileOf(b.shape, b.count);
      const g = new THREE.BufferGeometry();
      const mesh = new THREE.Mesh(g, pulledMaterial(b.material, b.transparency, ghost, tile.vertices));
      mesh.frustumCulled = false; // the tile's bounds are not the parts'; boundsOf knows them
      e = { mesh, pulled, rows: 0, texture: null, data: null, tile: null };
      pool.set(key, e);
    }
    const tile = tileOf(b.shape, b.count);
    if (e.tile !== tile) {
      e.tile = tile;
      e.mesh.geometry.setAttribute('position', tile.position);
      e.mesh.geometry.setAttribute('normal', tile.normal);
      e.mesh.geometry.setIndex(tile.index);
    }
    const rows = Math.max(1, Math.ceil(b.count / ROW_PARTS));
    if (rows > e.rows) {
      if (e.texture) e.texture.dispose();
      e.rows = Math.max(rows, e.rows * 2);
      e.data = new Float32Array(ROW_PARTS * 4 * e.rows * 4);
      e.texture = new THREE.DataTexture(e.data, ROW_PARTS * 4, e.rows, THREE.RGBAFormat, THREE.FloatType);
      e.mesh.material.userData.partData.value = e.texture;
    }
    const d = e.data, m = b.matrices, c = b.colors;
    d.set(m.subarray(0, b.count * 16));
    for (let i = 0; i < b.count; i++) {
      d[i * 16 + 3] = ghost ? 0.6 : c[i * 3];
      d[i * 16 + 7] = ghost ? 0.6 : c[i * 3 + 1];
      d[i * 16 + 11] = ghost ? 0.6 : c[i * 3 + 2];
    }
    e.texture.needsUpdate = true;
    e.mesh.geometry.setDrawRange(0, b.count * e.tile.indices);
  } else {
    if (!e || e.capacity < b.count) {
      if (e) { content.remove(e.mesh); e.mesh.dispose(); }
      const capacity = Math.max(64, 2 ** Math.ceil(Math.log2(b.count)));
      const material = new THREE.MeshStandardMaterial(materialOptions(b.material, b.transparency, ghost));
      material.vertexColors = b.shape === 'Mesh';
      if (b.double_sided) material.side = THREE.DoubleSide;
      const mesh = new THREE.InstancedMesh(geometryOf(b), material, capacity);
      mesh.instanceColor = new THREE.InstancedBufferAttribute(new Float32Array(capacity * 3), 3);
      e = { mesh, pulled, capacity };
      pool.set(key, e);
    }
    const mesh = e.mesh;
    mesh.geometry = geometryOf(b); // a script-built mesh is a new geometry every frame
    if (b.shape === 'Mesh') {
      // Its texture, if it has one (a new one every frame, as the geometry).
      const map = mesh.geometry.userData.map || null;
      if (mesh.material.map !== map) {
        mesh.material.map = map;
        const clear = map !== null && map.userData.seeThrough;
        if (clear && !mesh.material.transparent) mesh.material.transparent = true;
        mesh.material.needsUpdate = true;
      }
    }
    mesh.count = b.count;
    mesh.instanceMatrix.array.set(b.matrices);
    mesh.instanceMatrix.clearUpdateRanges();
    mesh.instanceMatrix.addUpdateRange(0, b.count * 16);
    mesh.instanceMatrix.needsUpdate = true;
    if (ghost) mesh.instanceColor.array.fill(0.6, 0, b.count * 3); else mesh.instanceColor.array.set(b.colors);
    mesh.instanceColor.clearUpdateRanges();
    mesh.instanceColor.addUpdateRange(0, b.count * 3);
    mesh.instanceColor.needsUpdate = true;
    mesh.computeBoundingSphere();
  }
  e.mesh.material.wireframe = wireframe;
  // What bounds, framing and picking read (the same for both kinds).
  e.mesh.userData = { ids: b.ids, ghost, shape: b.shape, geometry: b.geometry, matrices: b.matrices, count: b.count };
  return e;
}

function applyScene(sc, batches) {
  const byModel = new Map();
  for (const b of batches) {
    const model = b.model >= 0 ? sc.models[b.model] : null;
    if (model) { if (!byModel.has(model.id)) byModel.set(model.id, []); byModel.get(model.id).push(b); }
  }
  // Keep a copy of each successful model's batches; a failed model shows its last one ghosted.
  for (const model of sc.models) {
    if (!model.error) {
      lastGood.set(model.id, (byModel.get(model.id) || []).map((b) => ({ ...b, matrices: b.matrices.slice(), colors: b.colors.slice(), ids: b.ids.slice() })));
    }
  }
  const used = new Set();
  const draw = (b, ghost) => {
    if (b.count === 0) return;
    const model = b.model >= 0 ? sc.models[b.model].id : '-';
    const key = `${model}/${b.shape}/${b.mesh ?? ''}/${b.double_sided}/${b.material}/${b.transparency}/${ghost}`;
    const e = entryFor(key, b, ghost);
    used.add(key);
    if (!e.mesh.parent) content.add(e.mesh);
    e.mesh.visible = true;
  };
  for (const b of batches) draw(b, false);
  stats.ghosts = 0;
  for (const model of sc.models) {
    if (model.error && lastGood.has(model.id)) {
      for (const b of lastGood.get(model.id)) { draw(b, true); stats.ghosts += b.count; }
    }
  }
  // Batches gone from the scene: instanced meshes are freed; pulled ones are hidden and
  // kept (their geometry shares the shape's buffers), to be reused when the key returns.
  for (const [key, e] of pool) {
    if (used.has(key)) continue;
    if (e.pulled) { e.mesh.visible = false; } else { content.remove(e.mesh); e.mesh.dispose(); e.mesh.material.dispose(); pool.delete(key); }
  }
  meshes = [...pool.entries()].filter(([k]) => used.has(k)).map(([, e]) => e.mesh);
  stats.drawCalls = meshes.length;
  stats.triangles = batches.reduce((t, b) => t + b.count * (b.geometry ? b.geometry.index.count / 3 : TRIANGLES[b.shape]), 0);
  if (!framedOnce && sc.parts > 0) { frameAll(); framedOnce = true; }
  updateSizeBox();
  updateSelectionBox();
}
let framedOnce = false;

// The box around parts (all, or those whose tree node passes `filter`): each part's unit
// shape spans its matrix's axes, so its extent along X is half the sum of their |x|.
function boundsOf(filter) {
  const box = new THREE.Box3();
  if (!filter) for (const t of terrainMeshes) box.union(t.geometry.boundingBox);
  const lo = box.min, hi = box.max;
  for (const mesh of meshes) {
    if (mesh.userData.ghost) continue;
    const a = mesh.userData.matrices, ids = mesh.userData.ids;
    for (let i = 0; i < mesh.userData.count; i++) {
      if (filter && !filter(ids[i])) continue;
      const o = i * 16;
      for (let k = 0; k < 3; k++) {
        const h = 0.5 * (Math.abs(a[o + k]) + Math.abs(a[o + 4 + k]) + Math.abs(a[o + 8 + k])), c = a[o + 12 + k];
        const key = k === 0 ? 'x' : k === 1 ? 'y' : 'z';
        if (c - h < lo[key]) lo[key] = c - h;
        if (c + h > hi[key]) hi[key] = c + h;
      }
    }
  }
  return box;
}
function frameBox(box) {
  needsRender = true;
  if (box.isEmpty()) return;
  const c = box.getCenter(new THREE.Vector3()), r = box.getSize(new THREE.Vector3()).length() / 2 || 1;
  const dir = camera.position.clone().sub(controls.target).normalize();
  controls.target.copy(c);
  camera.position.copy(c).addScaledVector(dir, r / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 1.05);
  controls.update();
}
function frameAll() { frameBox(boundsOf(null)); }
function frameSelected() {
  if (selected == null) return frameAll();
  const under = (id) => { for (let n = id; n >= 0; n = state.nodes[n].parent) if (n === selected) return true; return false; };
  frameBox(boundsOf(under));
}

function selectedModel() {
  if (!state || state.models.length === 0) return null;
  for (let n = selected; n != null && n >= 0; n = state.nodes[n].parent) {
    const m = state.models.find((x) => x.node === n);
    if (m) return m;
  }
  return state.models[0];
}

function updateSizeBox() {
  const m = selectedModel();
  if (!m) { sizeBox.visible = false; return; }
  // The model's Size box around the bounds of its results' centre.
  const b = boundsOf((id) => { for (let n = id; n >= 0; n = state.nodes[n].parent) if (n === m.node) return true; return false; });
  if (b.isEmpty()) { sizeBox.visible = false; return; }
  const c = b.getCenter(new THREE.Vector3()), h = new THREE.Vector3(...m.size).multiplyScalar(0.5);
  sizeBox.box.set(c.clone().sub(h), c.clone().add(h));
  sizeBox.visible = true;
}

function updateSelectionBox() {
  const m = selectedModel();
  selectionBox.visible = false;
  if (selected == null || !state || !state.nodes[selected] || (m && m.node === selected)) return;
  const b = boundsOf((id) => { for (let n = id; n >= 0; n = state.nodes[n].parent) if (n === selected) return true; return false; });
  if (b.isEmpty()) return;
  selectionBox.box.copy(b);
  selectionBox.visible = true;
}

// ----- render loop and latency marks ----------------------------------------------------
let renderedRevision = 0;
controls.addEventListener('change', () => { needsRender = true; });
let fpsT = performance.now(), fpsN = 0;
function loop(now) {
  // Edits whose frame was rendered in the previous callback are presented now.
  for (const [s, tm] of timings) {
    if (tm.rendered && !tm.t_presented) {
      tm.t_presented = now;
      stats.seqPresented = Math.max(stats.seqPresented, s);
      stats.history.push({ seq: s, ...tm });
      if (stats.history.length > 2000) stats.history.shift();
      for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i].seq <= s) { waiters[i].resolve(tm); waiters.splice(i, 1); }
    }
  }
  // Render only when something changed: under software WebGL a scene of 10,000 parts
  // takes the CPU for hundreds of ms per render, which the server and the page's own
  // message handling need.
  // Input handlers update the controls themselves; only damping needs a call per frame.
  if (controls.enableDamping && controls.update()) needsRender = true;
  stats.frames++;
  if (needsRender) {
    needsRender = false;
    renderer.render(scene, camera);
    stats.renders++;
    for (const tm of timings.values()) if (tm.pendingPresent) { tm.pendingPresent = false; tm.rendered = true; }
    renderedRevision = stats.revision;
  }
  // Busy: the server says runs are in flight, or an edit has waited 300 ms for its frame.
  let waiting = false;
  for (const t of outstanding.values()) if (now - t > 300) waiting = true;
  $('busy').hidden = !((state && state.busy) || waiting);
  fpsN++;
  if (now - fpsT > 1000) { stats.fps = fpsN * 1000 / (now - fpsT); fpsN = 0; fpsT = now; status(); }
  requestAnimationFrame(loop);
}
requestAnimationFrame(loop);

// ----- panels ---------------------------------------------------------------------------
function status(text) {
  const el = $('status');
  if (text) { el.textContent = text; return; }
  if (!state) { el.textContent = 'connecting…'; return; }
  el.textContent = `instances ${state.instances} · parts ${state.parts} · triangles ${stats.triangles}${stats.terrain.triangles ? ` · terrain ${stats.terrain.triangles} triangles` : ''} · draw calls ${stats.drawCalls} · generation ${stats.generationMs.toFixed(1)} ms${stats.generationCached ? ' (from the cache)' : ''} · ${stats.fps.toFixed(0)} fps · rev ${state.revision}`;
  $('file').textContent = state.file;
}

function renderTree() {
  const el = $('tree');
  el.textContent = '';
  const depth = [];
  state.nodes.forEach((n, i) => {
    depth[i] = n.parent >= 0 ? depth[n.parent] + 1 : 0;
    if (i === 0) return; // the DataModel
    const d = document.createElement('div');
    d.className = 'node' + (i === selected ? ' selected' : '');
    d.style.paddingLeft = `${(depth[i] - 1) * 12 + 6}px`;
    d.dataset.node = i;
    d.textContent = n.name;
    const c = document.createElement('span'); c.className = 'class'; c.textContent = n.class; d.appendChild(c);
    if (n.hidden) { const h = document.createElement('span'); h.className = 'hidden'; h.textContent = ` (+${n.hidden} more)`; d.appendChild(h); }
    d.onclick = () => select(i);
    el.appendChild(d);
  });
}

// The ids from node `i` up to the root.
function pathOf(i) {
  const ids = [];
  for (let n = i; n != null && n >= 0; n = state.nodes[n].parent) ids.push(state.nodes[n].id);
  return ids;
}

// A new scene: the selection is its node again, or (a regenerated part is a new instance)
// its nearest ancestor still in the scene, or nothing.
function reselect() {
  if (!selectedPath) return;
  const at = new Map(state.nodes.map((n, i) => [n.id, i]));
  const id = selectedPath.find((x) => at.has(x));
  selected = id === undefined ? null : at.get(id);
  selectedPath = selected == null ? null : pathOf(selected);
}

function select(i) {
  selected = i;
  selectedPath = i == null ? null : pathOf(i);
  needsRender = true;
  renderTree();
  renderProperties();
  updateSizeBox();
  updateSelectionBox();
  stats.selectionBox = selectionBox.visible;
}

function fmt(x) { return Number.isInteger(x) ? String(x) : String(Math.round(x * 1e4) / 1e4); }

// A number field being dragged: the properties panel is not rebuilt under it (a frame arriving
// mid-drag would replace the element and end the drag), and is refreshed when it ends.
let dragging = false;

function numberField(label, value, isInt, commit, onDragEnd) {
  const input = document.createElement('input');
  input.type = 'text';
  input.className = 'scrub';
  input.value = fmt(value);
  input.setAttribute('aria-label', label);
  let start = null;
  input.addEventListener('pointerdown', (e) => {
    if (document.activeElement === input) return; // typing
    start = { x: e.clientX, v: Number(input.value) || 0, moved: false };
    input.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  input.addEventListener('pointermove', (e) => {
    if (!start) return;
    const dx = e.clientX - start.x;
    if (Math.abs(dx) < 3 && !start.moved) return;
    // One undo step per drag: the server joins the edits between gesture_start and _end.
    if (!start.moved) { send({ type: 'gesture_start' }); dragging = true; }
    start.moved = true;
    const step = (isInt ? 1 : 0.1) * (e.shiftKey ? 0.1 : 1) * (e.ctrlKey ? 10 : 1);
    let v = start.v + Math.round(dx / 4) * step;
    v = isInt && !e.shiftKey ? Math.round(v) : Math.round(v * 1e4) / 1e4;
    if (String(v) !== input.value) { input.value = fmt(v); commit(v); }
  });
  const endDrag = () => { send({ type: 'gesture_end' }); dragging = false; renderProperties(); };
  input.addEventListener('pointerup', () => {
    const s = start; start = null;
    if (s && s.moved) endDrag();
    if (s && !s.moved) { input.focus(); input.select(); } else if (onDragEnd) onDragEnd();
  });
  input.addEventListener('pointercancel', () => {
    const s = start; start = null;
    if (s && s.moved) endDrag();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      const v = Number(input.value);
      if (input.value.trim() === '' || !Number.isFinite(v)) { input.classList.add('bad'); toast(`${label}: not a number`); return; }
      input.classList.remove('bad');
      commit(v);
      input.blur();
    } else if (e.key === 'Escape') { input.value = fmt(value); input.blur(); }
  });
  return input;
}

function textField(label, text, parse, commit) {
  const input = document.createElement('input');
  input.type = 'text';
  input.value = text;
  input.setAttribute('aria-label', label);
  // Enter and the change event that follows it (and a blur) all land here: each text is
  // committed once, so one edit is one message and one undo step.
  let tried = text;
  const go = () => {
    if (input.value === tried) return;
    tried = input.value;
    const r = parse(input.value);
    if (r === undefined) { input.classList.add('bad'); toast(`${label}: cannot read '${input.value}'`); return; }
    input.classList.remove('bad');
    commit(r);
  };
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { go(); input.blur(); } });
  input.addEventListener('change', go);
  return input;
}

const parseList = (n) => (s) => {
  const xs = s.split(',').map((x) => x.trim()).filter((x) => x !== '').map(Number);
  return xs.length === n && xs.every(Number.isFinite) ? xs : undefined;
};

function attributeWidget(model, a) {
  const set = (value) => setAttribute(model.id, a.name, value);
  switch (a.type) {
    case 'number': {
      const isInt = Number.isInteger(a.default ?? a.value);
      return numberField(a.name, a.value, isInt, set);
    }
    case 'boolean': {
      const c = document.createElement('input');
      c.type = 'checkbox'; c.checked = a.value; c.setAttribute('aria-label', a.name);
      c.onchange = () => set(c.checked);
      return c;
    }
    case 'string': return textField(a.name, a.value, (s) => s, set);
    case 'Vector3': return textField(a.name, a.value.map(fmt).join(', '), parseList(3), set);
    case 'Vector2': return textField(a.name, a.value.map(fmt).join(', '), parseList(2), set);
    case 'NumberRange': return textField(a.name, a.value.map(fmt).join(', '), parseList(2), set);
    case 'BrickColor': return textField(a.name, a.value, (s) => s, set);
    // UDim, UDim2, Rect, CFrame, NumberSequence, ColorSequence, Font: their --attr text.
    case 'text': return textField(a.name, a.value, (s) => s, set);
    case 'Color3': {
      const wrap = document.createElement('span');
      wrap.style.display = 'flex'; wrap.style.flex = '1'; wrap.style.gap = '4px';
      const hex = '#' + a.value.map((x) => Math.round(x * 255).toString(16).padStart(2, '0')).join('');
      const pick = document.createElement('input');
      pick.type = 'color'; pick.value = hex; pick.setAttribute('aria-label', `${a.name} colour`);
      pick.oninput = () => { const v = pick.value; set([1, 3, 5].map((i) => parseInt(v.slice(i, i + 2), 16) / 255)); };
      const text = textField(a.name, a.value.map((x) => Math.round(x * 255)).join(', '), (s) => {
        const xs = parseList(3)(s); return xs && xs.every((x) => x >= 0 && x <= 255) ? xs.map((x) => x / 255) : undefined;
      }, set);
      wrap.append(pick, text);
      return wrap;
    }
    case 'EnumItem': {
      const s = document.createElement('select');
      s.setAttribute('aria-label', a.name);
      for (const [name, v] of state.enums[a.value.enum] || []) {
        const o = document.createElement('option'); o.value = v; o.textContent = name; o.selected = v === a.value.value; s.appendChild(o);
      }
      s.onchange = () => set(Number(s.value));
      return s;
    }
    default: {
      const span = document.createElement('span'); span.textContent = JSON.stringify(a.value); return span;
    }
  }
}

function renderProperties() {
  const el = $('properties');
  if (dragging) return;
  // Do not rebuild under a field being typed into (the next frame would reset it).
  if (el.contains(document.activeElement) && document.activeElement.tagName === 'INPUT' && document.activeElement.type === 'text') return;
  el.textContent = '';
  const node = selected != null ? state.nodes[selected] : null;
  const model = selectedModel();
  const h = document.createElement('h2');
  h.textContent = node && node !== (model && state.nodes[model.node]) ? `${node.class} "${node.name}"` : model ? `ProceduralModel "${model.name}"` : 'No ProceduralModel';
  el.appendChild(h);
  if (!model) return;
  const row = (label, widget, changed, reset) => {
    const r = document.createElement('div'); r.className = 'prop' + (changed ? ' changed' : '');
    const l = document.createElement('label'); l.textContent = label; l.title = label;
    r.append(l, widget);
    if (reset) { const b = document.createElement('button'); b.className = 'reset'; b.textContent = '↺'; b.title = 'Reset to default'; b.setAttribute('aria-label', `Reset ${label}`); b.onclick = reset; r.appendChild(b); }
    el.appendChild(r);
  };
  const sec = (t) => { const x = document.createElement('h3'); x.textContent = t; el.appendChild(x); };
  sec('Model');
  row('Size', textField('Size', model.size.map(fmt).join(', '), parseList(3), (v) => send({ type: 'set_size', model: model.id, value: v })));
  row('Scale', numberField('Scale', model.scale, false, (v) => send({ type: 'set_scale', model: model.id, value: v })));
  sec('Attributes');
  for (const a of model.attributes) {
    const w = attributeWidget(model, a);
    if (a.cli != null) w.title = `--attr ${a.name}=${a.cli}`;
    row(a.name, w, a.changed, a.default != null && a.changed ? () => send({ type: 'reset_attribute', model: model.id, name: a.name }) : null);
  }
  const regen = document.createElement('button'); regen.textContent = 'Regenerate';
  regen.onclick = () => send({ type: 'regenerate', model: model.id });
  el.appendChild(regen);
  if (model.cli) { const c = document.createElement('div'); c.className = 'cli'; c.textContent = model.cli; el.appendChild(c); }
}

function renderOverlay() {
  const el = $('overlay');
  const failed = state.models.filter((m) => m.error);
  el.hidden = failed.length === 0;
  el.textContent = failed.map((m) => `${m.path}: generation failed\n${m.error}`).join('\n\n');
}

function setAttribute(model, name, value) {
  const tm = { t_input: performance.now() };
  timings.set(seq + 1, tm);
  return send({ type: 'set_attribute', model, name, value });
}

// ----- toolbar and keys -----------------------------------------------------------------
$('undo').onclick = () => send({ type: 'undo' });
$('redo').onclick = () => send({ type: 'redo' });
$('save').onclick = () => send({ type: 'save' });
$('save-as').onclick = () => { const p = prompt('Save as (path or file name):', state ? state.save_path : ''); if (p) send({ type: 'save', path: p }); };
$('cancel').onclick = () => send({ type: 'cancel' });
$('frame-all').onclick = frameAll;
$('wireframe').onchange = (e) => { wireframe = e.target.checked; needsRender = true; for (const t of terrainMeshes) t.material.wireframe = wireframe; if (state) ws.send(JSON.stringify({ type: 'resync', seq: ++seq })); };
$('screenshot').onclick = () => {
  renderer.render(scene, camera);
  renderer.domElement.toBlob((blob) => { const a = document.createElement('a'); a.href = URL.createObjectURL(blob); a.download = 'procmodel-studio.png'; a.click(); });
};
$('copy-cli').onclick = async () => {
  const m = selectedModel();
  if (!m || !m.cli) return toast('no generator file to reproduce (a place was opened)');
  stats.copied = m.cli;
  try { await navigator.clipboard.writeText(m.cli); toast('copied: ' + m.cli, true); } catch { toast(m.cli, true); }
};
window.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
  const k = e.key.toLowerCase();
  if ((e.ctrlKey || e.metaKey) && k === 'z') { e.preventDefault(); send({ type: e.shiftKey ? 'redo' : 'undo' }); }
  else if ((e.ctrlKey || e.metaKey) && k === 'y') { e.preventDefault(); send({ type: 'redo' }); }
  else if (k === 'f') frameSelected();
  else if (e.key === 'Home') frameAll();
});

// Click to pick: the instance's tree node becomes the selection.
const ray = new THREE.Raycaster();
let down = null;
renderer.domElement.addEventListener('pointerdown', (e) => { down = [e.clientX, e.clientY]; });
renderer.domElement.addEventListener('pointerup', (e) => {
  if (!down || Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 4) return;
  const r = renderer.domElement.getBoundingClientRect();
  ray.setFromCamera(new THREE.Vector2(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1), camera);
  // Every batch as an (undrawn) InstancedMesh of its unit shape: the raycaster's
  // instanceId is the part's index in the batch.
  const targets = meshes.filter((m) => !m.userData.ghost).map((m) => {
    const u = m.userData, im = new THREE.InstancedMesh(geometryOf(u), m.material, u.count);
    im.instanceMatrix.array.set(u.matrices.subarray(0, u.count * 16));
    im.userData = u;
    return im;
  });
  const hit = ray.intersectObjects(targets, false)[0];
  if (hit && hit.instanceId != null) select(hit.object.userData.ids[hit.instanceId]);
});

// ----- the test and latency hook --------------------------------------------------------
window.__studio = {
  stats,
  get state() { return state; },
  setAttribute,
  send: (msg) => send(msg),
  sendRaw: (text) => ws.send(text),
  select,
  frameAll,
  // Frames everything so that it spans `fill` of the viewport's width or height, seen from
  // the current direction or from `direction` ([x, y, z] towards the camera); frameAll fits
  // the bounding sphere, which leaves a wide margin. The gallery's pictures.
  fit: (fill = 0.85, direction = null) => {
    if (direction) camera.position.copy(controls.target).add(new THREE.Vector3(...direction));
    frameAll();
    const box = boundsOf(null);
    if (box.isEmpty()) return;
    const corners = [];
    for (let i = 0; i < 8; i++) corners.push(new THREE.Vector3(i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y, i & 4 ? box.max.z : box.min.z));
    for (let k = 0; k < 4; k++) {
      camera.updateMatrixWorld();
      let m = 0;
      for (const c of corners) { const v = c.clone().project(camera); m = Math.max(m, Math.abs(v.x), Math.abs(v.y)); }
      if (!(m > 0)) break;
      const dir = camera.position.clone().sub(controls.target);
      camera.position.copy(controls.target).addScaledVector(dir, m / fill);
      controls.update();
    }
    // Then by the drawn pixels (the box's corners reach past most shapes): centre them and
    // scale them to `fill`. Helpers should be hidden first, or they count as drawn.
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight, px = new Uint8Array(w * h * 4);
    const bg = BACKGROUND.clone().convertLinearToSRGB();
    const br = Math.round(bg.r * 255), bgG = Math.round(bg.g * 255), bb = Math.round(bg.b * 255);
    for (let k = 0; k < 3; k++) {
      renderer.render(scene, camera);
      gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
      let x0 = w, y0 = h, x1 = -1, y1 = -1;
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const i = (y * w + x) * 4;
          if (Math.abs(px[i] - br) + Math.abs(px[i + 1] - bgG) + Math.abs(px[i + 2] - bb) <= 24) continue;
          if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
        }
      }
      if (x1 < 0) break;
      const cx = (x0 + x1 + 1) / w - 1, cy = (y0 + y1 + 1) / h - 1;
      const ext = Math.max((x1 + 1 - x0) / w, (y1 + 1 - y0) / h);
      const depth = controls.target.clone().project(camera).z;
      const shift = new THREE.Vector3(cx, cy, depth).unproject(camera).sub(controls.target);
      controls.target.add(shift);
      camera.position.add(shift);
      const dir = camera.position.clone().sub(controls.target);
      camera.position.copy(controls.target).addScaledVector(dir, ext / fill);
      controls.update();
    }
    needsRender = true;
  },
  waitPresented: (s) => new Promise((resolve) => {
    const tm = timings.get(s);
    if (tm && tm.t_presented) return resolve(tm);
    waiters.push({ seq: s, resolve });
  }),
  // Renders and reads the pixels back in the same task.
  sample: () => {
    renderer.render(scene, camera);
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const px = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const bg = BACKGROUND.clone().convertLinearToSRGB();
    const br = Math.round(bg.r * 255), bgG = Math.round(bg.g * 255), bb = Math.round(bg.b * 255);
    let other = 0; const colours = new Set();
    for (let i = 0; i < px.length; i += 16) {
      const d = Math.abs(px[i] - br) + Math.abs(px[i + 1] - bgG) + Math.abs(px[i + 2] - bb);
      if (d > 24) { other++; colours.add((px[i] >> 4) << 8 | (px[i + 1] >> 4) << 4 | (px[i + 2] >> 4)); }
    }
    return { nonBackgroundFraction: other / (px.length / 16), distinctColours: colours.size, width: w, height: h };
  },
  // Where part `i` of the first batch is on the page (for clicking it).
  project: (i) => { const u = meshes[0].userData, v = new THREE.Vector3(u.matrices[i * 16 + 12], u.matrices[i * 16 + 13], u.matrices[i * 16 + 14]).project(camera); const r = renderer.domElement.getBoundingClientRect(); return { x: r.left + (v.x + 1) / 2 * r.width, y: r.top + (1 - v.y) / 2 * r.height }; },
  hideHelpers: (hide) => { grid.visible = !hide; axes.visible = !hide; sizeBox.visible = !hide; if (hide) selectionBox.visible = false; else updateSelectionBox(); needsRender = true; },
};

connect();
