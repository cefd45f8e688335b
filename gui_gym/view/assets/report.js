// gui-gym report: renders the episode list, episode pages and run comparison from the JSON
// embedded in the page. Every text from a trajectory reaches the page through textContent or
// Text nodes (el() below), never through innerHTML, so no recorded string can become markup.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("gg-data").textContent);
  const RUNS = DATA.runs;
  const app = document.getElementById("app");
  const SVG_NS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  const filters = { run: "", task: "", category: "", outcome: "" };
  const compareFilter = { task: "" };

  // ------------------------------------------------------------------ building blocks

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const child of children) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "onclick") node.addEventListener("click", value);
      else if (key === "oninput") node.addEventListener("input", value);
      else if (key === "onchange") node.addEventListener("change", value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function fmt(value) {
    if (value === null || value === undefined) return "–";
    if (Number.isInteger(value)) return String(value);
    return String(Number(value.toFixed(4)));
  }

  function pct(rate) {
    return rate === null || rate === undefined ? "–" : (100 * rate).toFixed(1) + "%";
  }

  function outcomeChip(outcome, label) {
    return el("span", { class: "outcome outcome-" + outcome, text: label || outcome.replace("_", " ") });
  }

  function episodeHref(r, i) {
    return "#/e/" + r + "/" + i;
  }

  function runLabel(r) {
    return RUNS.length > 1 ? String.fromCharCode(65 + (r % 26)) + (r >= 26 ? String(r) : "") : "";
  }

  // ---------------------------------------------------------------------------- header

  function header(active) {
    const nav = el("nav", null,
      el("a", { href: "#/", class: active === "list" ? "active" : null, text: "Episodes" }));
    if (RUNS.length > 1) {
      nav.append(el("a", { href: "#/compare", id: "nav-compare", class: active === "compare" ? "active" : null, text: "Compare runs" }));
    }
    const names = el("ul", { class: "runs" });
    RUNS.forEach((run, r) => {
      names.append(el("li", null, RUNS.length > 1 ? el("b", { text: runLabel(r) + " " }) : null,
        el("span", { class: "run-name", text: run.name }),
        el("span", { class: "muted", text: " · " + run.episodes.length + " episodes" })));
    });
    return el("header", null, el("h1", { text: "gui-gym report" }), names, nav);
  }

  function successTable(run, r) {
    const table = el("table", { class: "categories", "data-run": r });
    table.append(el("thead", null, el("tr", null,
      el("th", { text: "category" }), el("th", { text: "episodes" }), el("th", { text: "success" }),
      el("th", { text: "infra errors" }), el("th", { text: "success rate" }))));
    const body = el("tbody");
    for (const row of run.categories) {
      body.append(el("tr", { class: row.category === null ? "total" : null },
        el("td", { text: row.category === null ? "all" : row.category || "(none)" }),
        el("td", { class: "num", text: fmt(row.episodes) }), el("td", { class: "num", text: fmt(row.success) }),
        el("td", { class: "num", text: fmt(row.infra_error) }), el("td", { class: "num", text: pct(row.rate) })));
    }
    table.append(body);
    return table;
  }

  // ------------------------------------------------------------------------ list view

  function listView() {
    const page = el("main", { id: "list" });
    const summary = el("section", { class: "summary" });
    RUNS.forEach((run, r) => {
      summary.append(el("div", null, el("h2", { text: (runLabel(r) ? runLabel(r) + ": " : "") + run.name }), successTable(run, r)));
    });
    page.append(summary);

    const categories = new Set();
    for (const run of RUNS) for (const ep of run.episodes) categories.add(ep.category);
    const bar = el("form", { class: "filters", id: "filters" });
    bar.addEventListener("submit", (event) => event.preventDefault());
    if (RUNS.length > 1) {
      const runSelect = el("select", { id: "filter-run", onchange: (e) => { filters.run = e.target.value; applyFilters(); } },
        el("option", { value: "", text: "all runs" }));
      RUNS.forEach((run, r) => runSelect.append(el("option", { value: String(r), text: runLabel(r) + ": " + run.name })));
      runSelect.value = filters.run;
      bar.append(el("label", null, "run ", runSelect));
    }
    const task = el("input", { id: "filter-task", type: "search", placeholder: "task id contains…", value: filters.task,
      oninput: (e) => { filters.task = e.target.value; applyFilters(); } });
    const category = el("select", { id: "filter-category", onchange: (e) => { filters.category = e.target.value; applyFilters(); } },
      el("option", { value: "", text: "all categories" }));
    for (const c of [...categories].sort()) category.append(el("option", { value: c, text: c || "(none)" }));
    category.value = filters.category;
    const outcome = el("select", { id: "filter-outcome", onchange: (e) => { filters.outcome = e.target.value; applyFilters(); } },
      el("option", { value: "", text: "all outcomes" }));
    for (const o of DATA.outcomes) outcome.append(el("option", { value: o, text: o.replace("_", " ") }));
    outcome.value = filters.outcome;
    bar.append(el("label", null, "task ", task), el("label", null, "category ", category), el("label", null, "outcome ", outcome));
    page.append(bar, el("p", { id: "episode-count" }));

    const showGroup = RUNS.some((run) => run.episodes.some((ep) => ep.group !== null));
    const head = el("tr");
    const columns = [RUNS.length > 1 ? "run" : null, "#", "task", "category", "outcome", "steps", "return", "task reward", "agent", "seed", showGroup ? "group" : null];
    for (const name of columns) if (name) head.append(el("th", { text: name }));
    const body = el("tbody");
    RUNS.forEach((run, r) => {
      run.episodes.forEach((ep, i) => {
        const row = el("tr", { class: "episode-row", "data-run": r, "data-i": i, "data-task": ep.task, "data-category": ep.category, "data-outcome": ep.outcome });
        if (RUNS.length > 1) row.append(el("td", { text: runLabel(r) }));
        row.append(el("td", { class: "num", text: String(i) }),
          el("td", { class: "task" }, el("a", { href: episodeHref(r, i), class: "episode-link", title: ep.task, text: ep.task || "(no task id)" })),
          el("td", { text: ep.category }), el("td", null, outcomeChip(ep.outcome)),
          el("td", { class: "num", text: fmt(ep.n) }), el("td", { class: "num", text: fmt(ep.ret) }),
          el("td", { class: "num", text: fmt(ep.task_reward) }), el("td", { class: "clip", text: ep.agent }),
          el("td", { class: "num", text: fmt(ep.seed) }));
        if (showGroup) row.append(el("td", { class: "clip", text: ep.group || "" }));
        body.append(row);
      });
    });
    page.append(el("table", { id: "episodes" }, el("thead", null, head), body));
    return page;
  }

  function applyFilters() {
    const task = filters.task.trim().toLowerCase();
    let shown = 0;
    let total = 0;
    for (const row of document.querySelectorAll("tr.episode-row")) {
      total += 1;
      const ok = (filters.run === "" || row.dataset.run === filters.run)
        && (task === "" || row.dataset.task.toLowerCase().includes(task))
        && (filters.category === "" || row.dataset.category === filters.category)
        && (filters.outcome === "" || row.dataset.outcome === filters.outcome);
      row.hidden = !ok;
      if (ok) shown += 1;
    }
    const count = document.getElementById("episode-count");
    if (count) count.textContent = shown + " of " + total + " episodes";
  }

  // --------------------------------------------------------------------- episode view

  function episodeView(r, i) {
    const run = RUNS[r];
    const summary = run && run.episodes[i];
    const ep = summary && Object.assign({}, summary, JSON.parse(document.getElementById("gg-e-" + r + "-" + i).textContent));
    if (!ep) return el("main", null, el("p", { text: "No such episode." }), el("a", { href: "#/", text: "← all episodes" }));
    const page = el("main", { id: "episode", "data-run": r, "data-i": i });
    const links = el("p", { class: "pager" }, el("a", { href: "#/", text: "← all episodes" }));
    if (i > 0) links.append(" · ", el("a", { href: episodeHref(r, i - 1), id: "prev-episode", text: "previous" }));
    if (i + 1 < run.episodes.length) links.append(" · ", el("a", { href: episodeHref(r, i + 1), id: "next-episode", text: "next" }));
    page.append(links);
    page.append(el("h2", { id: "episode-task" }, runLabel(r) ? runLabel(r) + " · " : null,
      el("span", { class: "task-id", text: ep.task || "(no task id)" }), " ", outcomeChip(ep.outcome)));
    page.append(el("p", { class: "instruction", id: "episode-instruction", text: ep.instruction }));
    const facts = el("dl", { class: "facts" });
    const add = (name, value) => { if (value !== null && value !== undefined && value !== "") facts.append(el("dt", { text: name }), el("dd", { text: String(value) })); };
    add("run", run.name); add("env", ep.env); add("category", ep.category); add("split", ep.split); add("agent", ep.agent);
    add("seed", ep.seed === null ? null : fmt(ep.seed)); add("steps", fmt(ep.n)); add("return", fmt(ep.ret));
    add("task reward", fmt(ep.task_reward)); add("group", ep.group);
    add("fork", ep.anchor_step === null || ep.anchor_step === undefined ? null : "steps before " + ep.anchor_step + " are shared by the group");
    add("infra error", ep.infra_error);
    page.append(facts);
    if (ep.metadata && Object.keys(ep.metadata).length) {
      page.append(el("details", { class: "metadata" }, el("summary", { text: "metadata" }), el("pre", { text: JSON.stringify(ep.metadata, null, 1) })));
    }
    page.append(curves(ep));
    const timeline = el("section", { id: "timeline" }, el("h3", { text: "Steps" }));
    if (!ep.steps.length) timeline.append(el("p", { class: "muted", text: ep.n ? "This record holds a step count but no steps." : "No steps." }));
    ep.steps.forEach((step, k) => timeline.append(stepCard(ep, step, k)));
    if (ep.final_screen) {
      timeline.append(el("details", { class: "final-screen" }, el("summary", { text: "final screen" }), el("pre", { class: "screen", text: ep.final_screen })));
    }
    page.append(timeline);
    return page;
  }

  function stepCard(ep, step, k) {
    const card = el("article", { class: "step" + (step.valid ? "" : " invalid"), id: "step-" + k });
    const picture = stepPicture(step);
    const body = el("div", { class: "step-body" });
    body.append(el("h4", null, "Step " + fmt(step.k), step.end ? el("span", { class: "end", text: " · " + step.end }) : null,
      k === ep.anchor_step ? el("span", { class: "fork", text: " · first step after the fork" }) : null));
    body.append(el("p", { class: "action" }, el("code", { text: step.action })));
    if (!step.valid) body.append(el("p", { class: "error" }, el("b", { text: "invalid action" }), step.error ? ": " + step.error : ""));
    if (step.description) body.append(el("p", { class: "description", text: step.description }));
    if (step.valid && step.error) body.append(el("p", { class: "error", text: step.error }));
    if (step.prompt) body.append(el("details", { class: "prompt" }, el("summary", { text: "prompt" }), el("pre", { text: step.prompt })));
    if (step.thought) body.append(el("div", { class: "thought" }, el("b", { text: "thought" }), el("pre", { text: step.thought })));
    if (step.generated) {
      body.append(el("div", { class: "generated" }, el("b", { text: "generated" + (step.tokens !== null ? " (" + step.tokens + " tokens)" : "") }), el("pre", { text: step.generated })));
    }
    if (step.new_milestones.length) {
      const list = el("ul", { class: "milestones" });
      for (const m of step.new_milestones) list.append(el("li", { text: m }));
      body.append(el("div", null, el("b", { text: "milestones reached" }), list));
    }
    const values = el("table", { class: "step-rewards" });
    const others = el("table", { class: "step-rewards" });
    for (const s of ep.series) {
      const v = s.values[k];
      if (v === null || v === undefined) continue;
      (s.primary ? values : others).append(el("tr", null, el("td", { text: s.name }), el("td", { class: "num", text: fmt(v) })));
    }
    if (values.childNodes.length) body.append(values);
    if (others.childNodes.length) body.append(el("details", { class: "more-values" }, el("summary", { text: "other numbers in info" }), others));
    const screen = el("details", { class: "screen-text", open: picture === null }, el("summary", { text: "screen (text)" }));
    const pre = el("pre", { class: "screen" });
    step.screen.split("\n").forEach((line, n) => {
      if (n) pre.append("\n");
      pre.append(n === step.highlight_line ? el("mark", { text: line }) : line);
    });
    screen.append(pre);
    body.append(screen);
    if (step.image_note) body.append(el("p", { class: "muted note", text: step.image_note }));
    card.append(picture || el("div", { class: "step-picture empty" }), body);
    return card;
  }

  function overlay(width, height, step) {
    const layer = svg("svg", { class: "overlay", viewBox: "0 0 " + width + " " + height, preserveAspectRatio: "none" });
    if (step.box) {
      const [x0, y0, x1, y1] = step.box;
      layer.append(svg("rect", { class: "target", x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(1, y1 - y0) }));
    }
    if (step.point) {
      const [x, y] = step.point;
      const r = Math.max(width, height) / 60;
      layer.append(svg("circle", { class: "point", cx: x, cy: y, r: r }));
    }
    return layer;
  }

  function stepPicture(step) {
    if (step.image && /^(data:image\/|\/file\/)/.test(step.image)) {
      const frame = el("div", { class: "step-picture shot" });
      const img = el("img", { src: step.image, alt: "screenshot of step " + step.k, loading: "lazy" });
      frame.append(img);
      if (step.box || step.point) {
        if (step.size) frame.append(overlay(step.size[0], step.size[1], step));
        else img.addEventListener("load", () => frame.append(overlay(img.naturalWidth, img.naturalHeight, step)));
      }
      return frame;
    }
    if (step.wireframe && step.size) {
      const [width, height] = step.size;
      const drawing = svg("svg", { class: "wireframe", viewBox: "0 0 " + width + " " + height });
      drawing.append(svg("rect", { class: "page", x: 0, y: 0, width: width, height: height }));
      for (const [role, label, x0, y0, x1, y1] of step.wireframe) {
        const box = svg("rect", { class: "element role-" + role.replace(/[^a-z0-9_-]/gi, ""), x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
        box.append(svg("title", { text: role + (label ? ": " + label : "") }));
        drawing.append(box);
        const fits = Math.floor((x1 - x0 - 4) / 6.2); // characters of 11px text the box holds
        if (label && y1 - y0 >= 10 && fits >= 2) {
          drawing.append(svg("text", { x: x0 + 3, y: Math.min(y1 - 3, y0 + 13), class: "label", text: label.length > fits ? label.slice(0, fits - 1) + "…" : label }));
        }
      }
      for (const child of overlay(width, height, step).childNodes) drawing.append(child.cloneNode(true));
      return el("div", { class: "step-picture" }, drawing);
    }
    return null;
  }

  // ------------------------------------------------------------------------ reward curves

  function curves(ep) {
    const section = el("section", { id: "curves" }, el("h3", { text: "Reward components per step" }));
    if (!ep.series.length || !ep.steps.length) {
      section.append(el("p", { class: "muted", text: "No reward components recorded." }));
      return section;
    }
    const groups = new Map();
    for (const s of ep.series) {
      if (!groups.has(s.component)) groups.set(s.component, []);
      groups.get(s.component).push(s);
    }
    const grid = el("div", { class: "curve-grid" });
    const more = el("div", { class: "curve-grid" });
    for (const [component, series] of groups) {
      const primary = series.filter((s) => s.primary);
      const rest = series.filter((s) => !s.primary);
      if (primary.length) grid.append(curve(component, primary, ep.steps.length));
      if (rest.length) more.append(curve(component, rest, ep.steps.length));
    }
    section.append(grid);
    if (more.childNodes.length) section.append(el("details", { class: "more-curves" }, el("summary", { text: "other numbers in info, per step" }), more));
    return section;
  }

  function curve(component, series, n) {
    const W = 360, H = 150, L = 44, R = 8, T = 8, B = 22;
    let lo = 0, hi = 0;
    for (const s of series) for (const v of s.values) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (hi === lo) hi = lo + 1;
    const x = (k) => L + (n > 1 ? (k * (W - L - R)) / (n - 1) : (W - L - R) / 2);
    const y = (v) => T + ((hi - v) * (H - T - B)) / (hi - lo);
    const chart = svg("svg", { class: "chart", viewBox: "0 0 " + W + " " + H, role: "img" });
    chart.append(svg("title", { text: component + " per step" }));
    chart.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }));
    chart.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
    chart.append(svg("text", { class: "tick", x: L - 4, y: y(hi) + 4, "text-anchor": "end", text: fmt(hi) }));
    chart.append(svg("text", { class: "tick", x: L - 4, y: y(lo) + 4, "text-anchor": "end", text: fmt(lo) }));
    chart.append(svg("text", { class: "tick", x: x(0), y: H - 6, "text-anchor": "middle", text: "0" }));
    if (n > 1) chart.append(svg("text", { class: "tick", x: x(n - 1), y: H - 6, "text-anchor": "middle", text: String(n - 1) }));
    const legend = el("ul", { class: "legend" });
    series.forEach((s, j) => {
      const colour = PALETTE[j % PALETTE.length];
      let path = "";
      let pen = false;
      s.values.forEach((v, k) => {
        if (v === null) { pen = false; return; }
        path += (pen ? " L" : " M") + x(k).toFixed(1) + " " + y(v).toFixed(1);
        pen = true;
      });
      chart.append(svg("path", { class: "series", d: path.trim() || "M0 0", stroke: colour, "data-name": s.name }));
      s.values.forEach((v, k) => {
        if (v === null) return;
        const dot = svg("circle", { class: "dot", cx: x(k).toFixed(1), cy: y(v).toFixed(1), r: 2.6, fill: colour });
        dot.append(svg("title", { text: s.name + " at step " + k + ": " + fmt(v) }));
        dot.addEventListener("click", () => { const card = document.getElementById("step-" + k); if (card) card.scrollIntoView({ block: "start" }); });
        chart.append(dot);
      });
      const swatch = el("span", { class: "swatch" });
      swatch.style.background = colour;
      legend.append(el("li", null, swatch, s.name));
    });
    return el("figure", { class: "curve", "data-component": component }, el("figcaption", { text: component }), chart, legend);
  }

  // ---------------------------------------------------------------------- compare view

  function compareView() {
    const page = el("main", { id: "compare" });
    page.append(el("h2", { text: "Success rate per category" }));
    const categories = new Set();
    for (const run of RUNS) for (const row of run.categories) if (row.category !== null) categories.add(row.category);
    const table = el("table", { id: "compare-categories", class: "categories" });
    const head = el("tr", null, el("th", { text: "category" }));
    RUNS.forEach((run, r) => head.append(el("th", { title: run.name, text: runLabel(r) + ": " + run.name })));
    if (RUNS.length === 2) head.append(el("th", { text: "B − A" }));
    table.append(el("thead", null, head));
    const body = el("tbody");
    for (const category of [...[...categories].sort(), null]) {
      const row = el("tr", { class: category === null ? "total" : null, "data-category": category === null ? "" : category },
        el("td", { text: category === null ? "all" : category || "(none)" }));
      const rates = [];
      for (const run of RUNS) {
        const cell = run.categories.find((c) => c.category === category);
        rates.push(cell ? cell.rate : null);
        row.append(el("td", { class: "num", text: cell ? pct(cell.rate) + " (" + cell.success + "/" + (cell.episodes - cell.infra_error) + ")" : "–" }));
      }
      if (RUNS.length === 2) {
        const delta = rates[0] === null || rates[1] === null ? null : rates[1] - rates[0];
        row.append(el("td", { class: "num delta" + (delta > 0 ? " up" : delta < 0 ? " down" : ""), text: delta === null ? "–" : (delta > 0 ? "+" : "") + (100 * delta).toFixed(1) + " pt" }));
      }
      body.append(row);
    }
    table.append(body);
    page.append(table);

    page.append(el("h2", { text: "Episodes per task, side by side" }));
    const search = el("input", { id: "compare-task", type: "search", placeholder: "task id contains…", value: compareFilter.task,
      oninput: (e) => { compareFilter.task = e.target.value; filterCompare(); } });
    page.append(el("form", { class: "filters" }, el("label", null, "task ", search)));
    const tasks = new Map();
    RUNS.forEach((run, r) => run.episodes.forEach((ep, i) => {
      if (!tasks.has(ep.task)) tasks.set(ep.task, { category: ep.category, cells: RUNS.map(() => []) });
      tasks.get(ep.task).cells[r].push([i, ep]);
    }));
    const side = el("table", { id: "compare-tasks" });
    const sideHead = el("tr", null, el("th", { text: "task" }), el("th", { text: "category" }));
    RUNS.forEach((run, r) => sideHead.append(el("th", { text: runLabel(r) })));
    side.append(el("thead", null, sideHead));
    const sideBody = el("tbody");
    for (const task of [...tasks.keys()].sort()) {
      const entry = tasks.get(task);
      const row = el("tr", { class: "task-row", "data-task": task }, el("td", { class: "task", title: task, text: task }), el("td", { text: entry.category }));
      entry.cells.forEach((cell, r) => {
        const td = el("td", { class: "chips" });
        for (const [i, ep] of cell) {
          const mark = ep.outcome === "success" ? "✓" : ep.outcome === "failure" ? "✗" : "!";
          td.append(el("a", { href: episodeHref(r, i), class: "chip outcome-" + ep.outcome, title: ep.outcome + ", " + ep.n + " steps, return " + fmt(ep.ret), text: mark }));
        }
        row.append(td);
      });
      sideBody.append(row);
    }
    side.append(sideBody);
    page.append(side);
    return page;
  }

  function filterCompare() {
    const task = compareFilter.task.trim().toLowerCase();
    for (const row of document.querySelectorAll("tr.task-row")) row.hidden = task !== "" && !row.dataset.task.toLowerCase().includes(task);
  }

  // ---------------------------------------------------------------------------- routing

  function route() {
    const hash = location.hash || "#/";
    const match = /^#\/e\/(\d+)\/(\d+)$/.exec(hash);
    const kind = match ? "episode" : hash === "#/compare" && RUNS.length > 1 ? "compare" : "list";
    if (kind === "episode") app.replaceChildren(header(kind), episodeView(Number(match[1]), Number(match[2])));
    else if (kind === "compare") app.replaceChildren(header(kind), compareView());
    else app.replaceChildren(header(kind), listView());
    if (kind === "compare") filterCompare();
    if (kind === "list") applyFilters();
    document.body.dataset.view = kind;
    window.scrollTo(0, 0);
  }

  document.title = "gui-gym report: " + RUNS.map((run) => run.name).join(" vs ");
  window.addEventListener("hashchange", route);
  route();
})();
