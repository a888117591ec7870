"use strict";
// The openreceipt console: one script for the sign-in page and the console page. Every node is built with
// createElement / createElementNS and every value goes in as text, never as markup.

const SVG = "http://www.w3.org/2000/svg";

// An element `tag` with attributes `attributes` and children (strings become text nodes; null is skipped).
function el(tag, attributes = {}, ...children) {
    return build(document.createElement(tag), attributes, children);
}

// The same for SVG elements.
function svg(tag, attributes = {}, ...children) {
    return build(document.createElementNS(SVG, tag), attributes, children);
}

function build(node, attributes, children) {
    for (const [name, value] of Object.entries(attributes)) {
        if (value !== null && value !== undefined) node.setAttribute(name, String(value));
    }
    for (const child of children) {
        if (child === null || child === undefined) continue;
        node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
}

function byId(id) {
    return document.getElementById(id);
}

// Replaces every child of `node` with `children`.
function fill(node, ...children) {
    node.replaceChildren(...children.filter((child) => child !== null && child !== undefined));
}

// An RFC 3339 instant as "2024-06-01 12:00:00Z"; absent values as a dash.
function when(value) {
    if (value === null || value === undefined || value === "") return "–";
    return String(value).replace("T", " ");
}

function text(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value === "boolean") return value ? "yes" : "no";
    return String(value);
}

function shortDate(date) {
    return date.toISOString().slice(0, 10);
}

function minuteOf(date) {
    return date.toISOString().slice(11, 16);
}

// A table row of text cells (a cell may also be a node).
function row(...cells) {
    return el("tr", {}, ...cells.map((cell) => el("td", {}, cell)));
}

function emptyRow(columns, message) {
    return el("tr", {}, el("td", { colspan: columns, class: "empty" }, message));
}

// ---- talking to the service

class ServiceError extends Error {
    constructor(status, body) {
        const detail = body && body.error ? body.error.message || body.error.code : "";
        super(detail ? `${status}: ${detail}` : `the service answered ${status}`);
        this.status = status;
        this.code = body && body.error ? body.error.code : null;
    }
}

let session = null;

// Fetches `path` with the session cookie; POSTs carry the CSRF token. Answers the parsed JSON body.
async function api(path, options = {}) {
    const headers = Object.assign({}, options.headers);
    if (options.method === "POST") headers["X-CSRF-Token"] = (await currentSession()).csrf_token;
    const response = await fetch(path, Object.assign({}, options, { headers, credentials: "same-origin" }));
    if (response.status === 401) {
        location.assign("/console/sign-in");
        throw new ServiceError(401, { error: { message: "signed out" } });
    }
    let body = null;
    try {
        body = await response.json();
    } catch (error) {
        body = null;
    }
    if (!response.ok) throw new ServiceError(response.status, body);
    return body;
}

async function currentSession() {
    if (session === null) session = await api("/console/api/session");
    return session;
}

// Runs `work`, showing "loading" and then any failure in the status line `statusId`.
async function withStatus(statusId, work) {
    const status = byId(statusId);
    status.textContent = "Loading…";
    status.classList.remove("failure");
    try {
        await work();
        status.textContent = "";
    } catch (error) {
        status.textContent = error.message;
        status.classList.add("failure");
    }
}

// ---- sections

const sections = ["overview", "inspect", "customer", "notifications"];
let overviewTimer = null;

function showSection() {
    const wanted = location.hash.slice(1);
    const current = sections.includes(wanted) ? wanted : "overview";
    for (const name of sections) {
        byId(name).hidden = name !== current;
        const link = byId(`nav-${name}`);
        if (name === current) link.setAttribute("aria-current", "page");
        else link.removeAttribute("aria-current");
    }
    clearInterval(overviewTimer);
    overviewTimer = null;
    if (current === "overview") {
        loadOverview();
        overviewTimer = setInterval(loadOverview, 10000);
    }
    if (current === "notifications") loadNotifications();
    return current;
}

// ---- overview

function loadOverview() {
    return withStatus("overview-status", async () => {
        const overview = await api("/console/api/overview");
        const health = byId("overview-health");
        health.textContent = overview.health;
        health.classList.toggle("bad", overview.health !== "ok");
        health.classList.toggle("good", overview.health === "ok");
        byId("overview-transactions").textContent = text(overview.ledger_transactions);
        drawRequests(byId("overview-chart"), overview.minutes || []);
    });
}

// A bar per minute, requests that succeeded below and errors stacked on top, with a scale on the left.
function drawRequests(chart, minutes) {
    const width = 720, height = 220, left = 44, bottom = 24, top = 10;
    const plotHeight = height - bottom - top;
    const most = Math.max(1, ...minutes.map((minute) => minute.requests));
    const slot = (width - left) / Math.max(60, minutes.length);
    const y = (count) => top + plotHeight - (count / most) * plotHeight;
    const marks = [];
    for (const tick of [0, most / 2, most]) {
        const value = Math.round(tick);
        marks.push(svg("line", { class: "grid", x1: left, x2: width, y1: y(value), y2: y(value) }));
        marks.push(svg("text", { class: "label", x: left - 6, y: y(value) + 4, "text-anchor": "end" }, String(value)));
    }
    minutes.forEach((minute, index) => {
        const x = left + index * slot + 1;
        const errors = Math.min(minute.errors, minute.requests);
        const start = new Date(minute.minute);
        const verdicts = Object.entries(minute.verifications || {}).map(([name, count]) => `${name} ${count}`);
        const detail = `${minuteOf(start)}: ${minute.requests} requests, ${errors} errors` +
            (verdicts.length ? `; verifications: ${verdicts.join(", ")}` : "");
        const bar = svg("g", { class: "bar" }, svg("title", {}, detail));
        const succeeded = minute.requests - errors;
        if (succeeded > 0) {
            bar.appendChild(svg("rect", {
                class: "requests", x, width: slot - 2, y: y(minute.requests), height: y(errors) - y(minute.requests),
            }));
        }
        if (errors > 0) {
            bar.appendChild(svg("rect", {
                class: "errors", x, width: slot - 2, y: y(errors), height: y(0) - y(errors),
            }));
        }
        marks.push(bar);
        const lastBar = index === minutes.length - 1;
        if (index % 15 === 0 || lastBar) {
            marks.push(svg("text", {
                class: "label", x: lastBar ? x + slot : x, y: height - 6, "text-anchor": lastBar ? "end" : "start",
            }, minuteOf(start)));
        }
    });
    marks.push(svg("line", { class: "axis", x1: left, x2: width, y1: y(0), y2: y(0) }));
    chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
    fill(chart, ...marks);
}

// ---- inspect

function inspect(body, contentType, what) {
    return withStatus("inspect-status", async () => {
        const result = await api("/console/api/inspect", {
            method: "POST", body, headers: { "Content-Type": contentType },
        });
        showInspection(result, what);
    });
}

function showInspection(result, what) {
    byId("inspect-result").hidden = false;
    const verdict = byId("inspect-verdict");
    verdict.textContent = result.valid ? "valid" : "invalid";
    verdict.className = result.valid ? "verdict good" : "verdict bad";
    byId("inspect-summary").textContent = `${what}: ${text(result.format)}, checked at ${when(result.checked_at)}`;
    const failure = byId("inspect-failure");
    if (result.failure) {
        fill(failure,
            el("p", {}, el("strong", {}, `The ${result.failure.check} check failed: `),
                result.failure.explanation || result.failure.message),
            el("p", { class: "hint" }, `${result.failure.code}: ${result.failure.message}`));
        failure.hidden = false;
    } else {
        fill(failure);
        failure.hidden = true;
    }
    fill(byId("inspect-fields"), fieldList(result.fields || {}));
    const chain = result.chain || [];
    fill(byId("inspect-chain").tBodies[0], ...(chain.length ? chain.map((certificate) => {
        const valid = certificate.valid_at_checked_instant;
        return row(certificate.subject, certificate.issuer, when(certificate.not_before),
            when(certificate.not_after), el("span", { class: valid ? "good" : "bad" }, valid ? "valid" : "not valid"));
    }) : [emptyRow(5, "no certificates")]));
    const device = result.device_binding;
    if (device) {
        const bound = device.bound ? "bound to the device" : "not bound to the device";
        byId("inspect-device").textContent = device.detail ? `${bound}: ${device.detail}` : bound;
    } else {
        byId("inspect-device").textContent = "not checked (no device identifier given)";
    }
}

// Decoded fields as a definition list; objects and arrays nest.
function fieldList(fields) {
    const list = el("dl", { class: "fields" });
    for (const [name, value] of Object.entries(fields)) {
        list.appendChild(el("dt", {}, name));
        list.appendChild(el("dd", {}, fieldValue(value)));
    }
    return list;
}

function fieldValue(value) {
    if (Array.isArray(value)) {
        if (value.length === 0) return "none";
        return el("ol", {}, ...value.map((item) => el("li", {}, fieldValue(item))));
    }
    if (value !== null && typeof value === "object") return fieldList(value);
    return text(value);
}

// True when `bytes` look like text: a base64 receipt, JWS, JSON or a property list, rather than DER.
function looksLikeText(bytes) {
    return bytes.every((byte) => byte === 9 || byte === 10 || byte === 13 || (byte >= 32 && byte < 127));
}

function inspectFile(file) {
    const reader = new FileReader();
    reader.addEventListener("load", () => {
        const bytes = new Uint8Array(reader.result);
        if (looksLikeText(bytes)) {
            inspect(new TextDecoder().decode(bytes), "text/plain; charset=utf-8", file.name);
        } else {
            inspect(bytes, "application/octet-stream", `${file.name} (${bytes.length} bytes of DER)`);
        }
    });
    reader.addEventListener("error", () => {
        byId("inspect-status").textContent = `${file.name} could not be read`;
    });
    reader.readAsArrayBuffer(file);
}

function setUpInspect() {
    byId("inspect-form").addEventListener("submit", (event) => {
        event.preventDefault();
        const input = byId("inspect-input").value.trim();
        if (input === "") {
            byId("inspect-status").textContent = "Paste a receipt or choose a file first.";
            return;
        }
        inspect(input, "text/plain; charset=utf-8", "pasted text");
    });
    byId("inspect-file").addEventListener("change", (event) => {
        if (event.target.files.length > 0) inspectFile(event.target.files[0]);
    });
    const drop = byId("inspect-drop");
    drop.addEventListener("dragover", (event) => {
        event.preventDefault();
        drop.classList.add("over");
    });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (event) => {
        event.preventDefault();
        drop.classList.remove("over");
        if (event.dataTransfer.files.length > 0) inspectFile(event.dataTransfer.files[0]);
    });
}

// ---- customer

function setUpCustomer() {
    byId("customer-form").addEventListener("submit", (event) => {
        event.preventDefault();
        const query = byId("customer-query").value.trim();
        byId("customer-result").hidden = true;
        withStatus("customer-status", async () => {
            try {
                showCustomer(await api(`/console/api/customer?query=${encodeURIComponent(query)}`));
            } catch (error) {
                if (error.status !== 404) throw error;
                throw new Error(`No customer, transaction or original transaction is called "${query}".`);
            }
        });
    });
}

function showCustomer(customer) {
    byId("customer-result").hidden = false;
    const by = customer.matched_by || "customer_id";
    const matched = by === "customer_id" ? "" : ` (found by its ${by.replace(/_/g, " ")})`;
    byId("customer-id").textContent = customer.customer_id + matched;
    const apps = customer.apps || [];
    const transactions = [], renewals = [], blocks = [];
    for (const app of apps) {
        for (const transaction of app.transactions || []) transactions.push(row(app.bundle_id,
            transaction.product_id, transaction.transaction_id, text(transaction.original_transaction_id),
            when(transaction.purchase_date), when(transaction.expires_date), when(transaction.cancellation_date),
            text(transaction.quantity)));
        for (const renewal of app.renewal_info || []) renewals.push(row(app.bundle_id,
            renewal.original_transaction_id, renewal.product_id, text(renewal.auto_renews),
            text(renewal.auto_renew_product_id), text(renewal.expiration_intent),
            text(renewal.is_in_billing_retry_period), when(renewal.grace_period_expires_date),
            when(renewal.signed_date)));
        blocks.push(entitlementBlock(app));
    }
    fill(byId("customer-transactions").tBodies[0], ...(transactions.length ? transactions : [emptyRow(8, "none")]));
    fill(byId("customer-renewals").tBodies[0], ...(renewals.length ? renewals
        : [emptyRow(9, "none: the service learns renewal intent from Apple's notifications")]));
    fill(byId("customer-entitlements"), ...blocks);
    drawTimeline(byId("customer-timeline"), apps, new Date(customer.now));
}

// What one app unlocks: the /v1/customers/{c}/entitlements report, or its "entitlements" member alone.
function entitlementBlock(app) {
    const block = el("div", { class: "entitlements" }, el("h3", {}, app.bundle_id));
    const report = app.entitlements;
    if (report === null || report === undefined) {
        block.appendChild(el("p", { class: "hint" }, "No catalog names this app, so no entitlements are known."));
        return block;
    }
    const entitlements = report.entitlements && typeof report.entitlements === "object" ? report.entitlements : report;
    const names = Object.keys(entitlements);
    const rows = names.map((name) => {
        const entitlement = entitlements[name];
        return row(name, el("span", { class: `state ${entitlement.state}` }, text(entitlement.state)),
            text(entitlement.product_id), when(entitlement.expires_date), when(entitlement.grace_expires_date));
    });
    block.appendChild(el("div", { class: "table-box" }, el("table", {},
        el("thead", {}, el("tr", {}, ...["Entitlement", "State", "Product", "Expires", "Grace ends"].map(
            (heading) => el("th", {}, heading)))),
        el("tbody", {}, ...(rows.length ? rows : [emptyRow(5, "nothing unlocked")])))));
    if (report.balances && Object.keys(report.balances).length) {
        const balances = Object.entries(report.balances).map(([name, count]) => `${name} ${count}`);
        block.appendChild(el("p", {}, `Balances: ${balances.join(", ")}`));
    }
    if (Array.isArray(report.unknown_products) && report.unknown_products.length) {
        block.appendChild(el("p", { class: "hint" }, `Not in the catalog: ${report.unknown_products.join(", ")}`));
    }
    return block;
}

// The timeline: a row per subscription (original transaction) and one for one-time purchases, on a shared
// time axis from the first purchase to now.
function drawTimeline(chart, apps, now) {
    const lanes = new Map();
    const oneTime = [];
    const renewalsByOriginal = new Map();
    for (const app of apps) {
        for (const renewal of app.renewal_info || []) renewalsByOriginal.set(renewal.original_transaction_id, renewal);
        for (const transaction of app.transactions || []) {
            if (!transaction.subscription) {
                oneTime.push(transaction);
                continue;
            }
            const original = transaction.original_transaction_id || transaction.transaction_id;
            if (!lanes.has(original)) lanes.set(original, { original, product: transaction.product_id, periods: [] });
            lanes.get(original).periods.push(transaction);
        }
    }
    const instants = [now.getTime()];
    for (const transaction of apps.flatMap((app) => app.transactions || [])) {
        for (const date of [transaction.purchase_date, transaction.expires_date, transaction.cancellation_date]) {
            if (date) instants.push(new Date(date).getTime());
        }
    }
    for (const renewal of renewalsByOriginal.values()) {
        if (renewal.grace_period_expires_date) instants.push(new Date(renewal.grace_period_expires_date).getTime());
    }
    const first = Math.min(...instants), last = Math.max(...instants);
    const span = Math.max(last - first, 86400000);
    const start = first - span * 0.03, end = last + span * 0.03;
    const width = 760, left = 170, laneHeight = 34, top = 8;
    const rows = [...lanes.values()];
    if (oneTime.length) rows.push(null);
    const height = top + Math.max(1, rows.length) * laneHeight + 30;
    const x = (date) => left + ((new Date(date).getTime() - start) / (end - start)) * (width - left - 10);
    const marks = [];
    const refund = (transaction, y) => {
        marks.push(svg("rect", { class: "refund", x: x(transaction.cancellation_date) - 2, y: y - 12, width: 4,
            height: 24, tabindex: 0 },
        svg("title", {}, `refund of ${transaction.transaction_id} (${transaction.product_id}) on ` +
            when(transaction.cancellation_date))));
    };
    rows.forEach((lane, index) => {
        const y = top + index * laneHeight + laneHeight / 2;
        marks.push(svg("text", { class: "label", x: 4, y: y + 4 }, lane ? lane.product : "one-time purchases"));
        marks.push(svg("line", { class: "lane", x1: left, x2: width - 10, y1: y, y2: y }));
        if (lane === null) {
            for (const transaction of oneTime) {
                marks.push(svg("circle", { class: "purchase", cx: x(transaction.purchase_date), cy: y, r: 6,
                    tabindex: 0 },
                svg("title", {}, `${transaction.product_id} × ${text(transaction.quantity)}, transaction ` +
                    `${transaction.transaction_id}, bought ${when(transaction.purchase_date)}`)));
                if (transaction.cancellation_date) refund(transaction, y);
            }
            return;
        }
        let lastExpiry = null;
        for (const period of lane.periods) {
            const ends = period.expires_date || period.cancellation_date || now.toISOString();
            marks.push(svg("rect", { class: "period", x: x(period.purchase_date), y: y - 9,
                width: Math.max(2, x(ends) - x(period.purchase_date) - 1), height: 18, tabindex: 0 },
            svg("title", {}, `${period.product_id}, transaction ${period.transaction_id}: ` +
                `${when(period.purchase_date)} to ${when(period.expires_date)}`)));
            if (period.cancellation_date) refund(period, y);
            if (period.expires_date && (lastExpiry === null || period.expires_date > lastExpiry)) {
                lastExpiry = period.expires_date;
            }
        }
        const renewal = renewalsByOriginal.get(lane.original);
        if (renewal && lastExpiry) {
            if (renewal.grace_period_expires_date) {
                marks.push(svg("rect", { class: "grace", x: x(lastExpiry), y: y - 9, height: 18, tabindex: 0,
                    width: Math.max(2, x(renewal.grace_period_expires_date) - x(lastExpiry)) },
                svg("title", {}, `grace period until ${when(renewal.grace_period_expires_date)}`)));
            }
            if (renewal.is_in_billing_retry_period) {
                const retryEnds = Math.max(now.getTime(), new Date(lastExpiry).getTime());
                marks.push(svg("rect", { class: "retry", x: x(lastExpiry), y: y - 4, height: 8, tabindex: 0,
                    width: Math.max(2, x(retryEnds) - x(lastExpiry)) },
                svg("title", {}, `Apple is retrying billing since ${when(lastExpiry)}`)));
            }
        }
    });
    const axisY = height - 22;
    marks.push(svg("line", { class: "axis", x1: left, x2: width - 10, y1: axisY, y2: axisY }));
    for (let step = 0; step <= 4; step += 1) {
        const date = new Date(start + ((end - start) * step) / 4);
        const tickX = x(date);
        marks.push(svg("line", { class: "axis", x1: tickX, x2: tickX, y1: axisY, y2: axisY + 4 }));
        const anchor = step === 4 ? "end" : "middle";
        marks.push(svg("text", { class: "label", x: tickX, y: axisY + 16, "text-anchor": anchor }, shortDate(date)));
    }
    marks.push(svg("line", { class: "now", x1: x(now), x2: x(now), y1: top, y2: axisY },
        svg("title", {}, `now: ${when(now.toISOString())}`)));
    chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
    fill(chart, ...marks);
}

// ---- notifications

function loadNotifications() {
    return withStatus("notifications-status", async () => {
        const answer = await api("/console/api/notifications?limit=50");
        const typeOf = (notification) => notification.notification_type +
            (notification.subtype ? ` (${notification.subtype})` : "");
        const received = (answer.received || []).map((notification) => row(when(notification.received_date),
            typeOf(notification), text(notification.bundle_id), text(notification.customer_id),
            text(notification.transaction_id),
            el("ul", { class: "plain" }, ...(notification.effects || []).map((effect) => el("li", {}, effect))),
        ));
        const sent = (answer.sent || []).map((notification) => row(when(notification.signed_date),
            typeOf(notification), text(notification.bundle_id), text(notification.url),
            text(notification.transaction_id),
            deliveryOf(notification),
            el("ul", { class: "plain attempts" }, ...(notification.attempts || []).map(attemptItem)),
        ));
        fill(byId("notifications-received").tBodies[0], ...(received.length ? received : [emptyRow(6, "none yet")]));
        fill(byId("notifications-sent").tBodies[0], ...(sent.length ? sent : [emptyRow(7, "none yet")]));
    });
}

function deliveryOf(notification) {
    if (notification.delivered) return "yes";
    if (notification.next_attempt_date) return `not yet; next attempt ${when(notification.next_attempt_date)}`;
    return "no; every attempt failed";
}

function attemptItem(attempt) {
    const status = attempt.http_status ? ` (HTTP ${attempt.http_status})` : "";
    return el("li", {}, `${when(attempt.date)}: ${attempt.result}${status}`);
}

// ---- the two pages

function setUpSignOut() {
    byId("sign-out").addEventListener("submit", async (event) => {
        event.preventDefault();
        try {
            await fetch("/console/sign-out", {
                method: "POST", credentials: "same-origin",
                headers: { "X-CSRF-Token": (await currentSession()).csrf_token },
            });
        } finally {
            location.assign("/console/sign-in");
        }
    });
}

async function showSessionExpiry() {
    try {
        const expires = new Date((await currentSession()).expires);
        byId("session-expires").textContent = `signed in until ${minuteOf(expires)} UTC`;
    } catch (error) {
        byId("session-expires").textContent = "";
    }
}

function startConsole() {
    setUpSignOut();
    setUpInspect();
    setUpCustomer();
    showSessionExpiry();
    showSection();
    window.addEventListener("hashchange", () => {
        const current = showSection();
        byId(`${current}-title`).focus();
    });
}

function startSignIn() {
    if (new URLSearchParams(location.search).get("failed") === "1") byId("sign-in-failed").hidden = false;
}

if (byId("sign-in")) startSignIn();
else startConsole();
