"""Drives the service's web console in a real headless browser: Chromium (Selenium, /usr/bin/chromium and
/usr/bin/chromedriver) or Firefox (/usr/bin/firefox-esr over its own Marionette protocol with Mozilla's
marionette_driver: Debian packages no geckodriver). One scenario serves both; only `Chromium` and `Firefox` below
know which browser it is.

Reads one JSON document on standard input:
  {"browser" ("chromium" or "firefox"), "browser_log" (a file for the browser's own output), "base_url", "token", "screenshots" (a directory), "receipt_file" (a valid
   receipt, DER), "tampered_base64" (the same receipt with one byte of its signature changed, base64), "customer"
   (a customer id), "xss_product" (a product id made of markup)}
and prints one JSON object: for each check below, what the browser saw ({"error": TEXT} when the check could not
finish), plus "csp_violations" and "console_errors": the browser's log lines of the whole run that report a
Content Security Policy violation, and every other error line. The checks run in this order in one signed-in
browser (sign_out last); no_session uses a fresh profile; csp_canary, last, breaks the policy on purpose to show
that a violation does reach the log read here (its lines are not among csp_violations).

Checks: sign_in, overview, inspect_valid, inspect_tampered, customer, xss, notifications, keyboard, narrow, dark,
headers, sign_out, no_session, csp_canary. Screenshots (1280 px wide): sign-in.png, overview.png, inspect.png,
customer.png, notifications.png.
"""

import json
import os
import signal
import socket
import sys
import time
import traceback
import urllib.error
import urllib.request

WIDTH, HEIGHT, NARROW = 1280, 900, 360
# Every step that waits gives up after this many seconds, and so does a page load or a script.
STEP_SECONDS = 30
SECURITY_HEADERS = [
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "X-Frame-Options",
    "Cache-Control",
]
# W3C WebDriver's locator strategies and key code points, the same in Selenium and Marionette.
CSS, TAG = "css selector", "tag name"
ENTER, TAB = "\ue007", "\ue004"


class Chromium:
    """Headless Chromium through chromedriver (Selenium)."""

    name = "chromium"

    def __init__(self, browser_log):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         f"--window-size={WIDTH},{HEIGHT}"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service("/usr/bin/chromedriver", log_output=browser_log)
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(STEP_SECONDS)
        self.driver.set_script_timeout(STEP_SECONDS)
        self.resize(WIDTH, HEIGHT)

    def get(self, url):
        self.driver.get(url)

    @property
    def url(self):
        return self.driver.current_url

    def find(self, css):
        return self.driver.find_element(CSS, css)

    def find_all(self, css):
        return self.driver.find_elements(CSS, css)

    def script(self, source, *arguments):
        return self.driver.execute_script(source, *arguments)

    def async_script(self, source, *arguments):
        return self.driver.execute_async_script(source, *arguments)

    def cookie(self, name):
        return self.driver.get_cookie(name)

    def screenshot(self, path):
        self.driver.save_screenshot(path)

    def resize(self, width, height):
        self.driver.set_window_size(width, height)

    def narrow(self, on):
        self.resize(NARROW if on else WIDTH, HEIGHT)

    def active_element(self):
        return self.driver.switch_to.active_element

    def press(self, key):
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.driver).send_keys(key).perform()

    def dismiss_alert(self):
        """The text of the alert shown, dismissed; None when there is none."""
        from selenium.common.exceptions import NoAlertPresentException

        try:
            alert = self.driver.switch_to.alert
            text = alert.text
            alert.dismiss()
            return text
        except NoAlertPresentException:
            return None

    def prefer_dark(self, dark):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})

    def log(self):
        """The log lines since the last call: {"message", "error", "csp"}."""
        return [{"message": line["message"], "error": line["level"] == "SEVERE",
                 "csp": "Content Security Policy" in line["message"]}
                for line in self.driver.get_log("browser")]

    def quit(self):
        self.driver.quit()


class Firefox:
    """Headless Firefox ESR over Marionette, the remote protocol built into Firefox (no geckodriver)."""

    name = "firefox"
    binary = "/usr/bin/firefox-esr"

    def __init__(self, browser_log):
        from marionette_driver.marionette import Marionette

        with socket.socket() as probe:  # a free port for Marionette to listen on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        # -remote-allow-system-access lets the chrome (browser) context run script: the log and preferences.
        self.client = Marionette(bin=self.binary, port=port, headless=True, startup_timeout=60,
                                 socket_timeout=STEP_SECONDS + 30, gecko_log=browser_log,
                                 app_args=["-remote-allow-system-access"])
        self.client.start_session(timeout=60)
        self.client.timeout.page_load = STEP_SECONDS
        self.client.timeout.script = STEP_SECONDS
        self.seen = 0.0
        self.resize(WIDTH, HEIGHT)

    def get(self, url):
        self.client.navigate(url)

    @property
    def url(self):
        return self.client.get_url()

    def find(self, css):
        return self.client.find_element(CSS, css)

    def find_all(self, css):
        return self.client.find_elements(CSS, css)

    def script(self, source, *arguments):
        # sandbox=None: in the page's own global, as Selenium's scripts run, not in a sandbox over it.
        return self.client.execute_script(source, script_args=list(arguments), sandbox=None)

    def async_script(self, source, *arguments):
        return self.client.execute_async_script(source, script_args=list(arguments), sandbox=None)

    def cookie(self, name):
        return self.client.get_cookie(name)

    def screenshot(self, path):
        with open(path, "wb") as file:
            file.write(self.client.screenshot(format="binary", full=False))

    def resize(self, width, height):
        self.client.set_window_rect(width=width, height=height)

    def narrow(self, on):
        """Firefox's window is at least 500 px wide, so a page 360 CSS pixels wide is had by zooming a 500 px window
        to 500/360 (as Ctrl-+ does; it holds while only the fragment changes)."""
        self.resize(500 if on else WIDTH, HEIGHT)
        with self.client.using_context("chrome"):
            self.client.execute_script("gBrowser.selectedBrowser.fullZoom = arguments[0]",
                                       script_args=[500 / NARROW if on else 1])
        # The page's process learns of the zoom a moment later.
        wait(lambda: (self.script("return window.innerWidth") <= NARROW) == on)

    def active_element(self):
        return self.client.get_active_element()

    def press(self, key):
        self.client.actions.sequence("key", "keyboard").key_down(key).key_up(key).perform()

    def dismiss_alert(self):
        from marionette_driver import errors
        from marionette_driver.marionette import Alert

        try:
            alert = Alert(self.client)
            text = alert.text
            alert.dismiss()
            return text
        except errors.NoAlertPresentException:
            return None

    def prefer_dark(self, dark):
        self.client.set_pref("layout.css.prefers-color-scheme.content-override", 0 if dark else 1)
        # The preference reaches the page's process a moment later.
        wait(lambda: self.script("return matchMedia('(prefers-color-scheme: dark)').matches") == dark)

    def log(self):
        """The pages' log lines since the last call: the console service's messages from content (not from the
        browser itself), errors and CSP reports, with what they called console.error."""
        with self.client.using_context("chrome"):
            lines = self.client.execute_script("""
                const [since] = arguments;
                const lines = [];
                for (const m of Services.console.getMessageArray()) {
                    if (!(m instanceof Ci.nsIScriptError) || m.isFromChromeContext || m.timeStamp <= since) continue;
                    const csp = m.category.startsWith("CSP");
                    const error = !(m.flags & (Ci.nsIScriptError.warningFlag | Ci.nsIScriptError.infoFlag));
                    if (csp || error) lines.push({time: m.timeStamp, message: m.errorMessage, error, csp});
                }
                const storage = Cc["@mozilla.org/consoleAPI-storage;1"].getService(Ci.nsIConsoleAPIStorage);
                for (const event of storage.getEvents()) {
                    // The pages' own calls; the browser's (resource://, chrome://) are not the console's.
                    if (event.level !== "error" || event.timeStamp <= since) continue;
                    if (event.chromeContext || !String(event.filename).startsWith("http")) continue;
                    const message = "console.error: " + event.arguments.map(String).join(" ");
                    lines.push({time: event.timeStamp, message, error: true, csp: false});
                }
                return lines;
            """, script_args=[self.seen])
        self.seen = max([self.seen] + [line["time"] for line in lines])
        return [{key: line[key] for key in ("message", "error", "csp")} for line in lines]

    def quit(self):
        self.client.cleanup()


BROWSERS = {"chromium": Chromium, "firefox": Firefox}


def wait(condition, seconds=STEP_SECONDS):
    """`condition()` once it is true, asked every 0.1 s; an exception counts as not yet (the element is not there
    yet). A TimeoutError after `seconds`, with the last exception."""
    deadline = time.time() + seconds
    last = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # not there yet, or changed while read
            last = error
        if time.time() > deadline:
            raise TimeoutError(f"not within {seconds} s" + (f" (last: {type(last).__name__}: {last})" if last else ""))
        time.sleep(0.1)


class Console:
    """One browser on the console, and the log lines it wrote."""

    def __init__(self, spec):
        self.spec = spec
        self.base = spec["base_url"]
        self.browser = BROWSERS[spec["browser"]](spec["browser_log"])
        self.log = []

    def wait(self, condition, seconds=15):
        return wait(lambda: condition(self.browser), seconds)

    def find(self, css):
        return self.browser.find(css)

    def find_all(self, css):
        return self.browser.find_all(css)

    def collect_log(self):
        self.log.extend(self.browser.log())

    def page(self, section):
        """Shows `section` with its nav link, as a person would."""
        self.find(f"#nav-{section}").click()
        self.wait(lambda browser: self.find(f"#{section}").is_displayed())

    def wait_for_text(self, css, seconds=15):
        self.wait(lambda browser: self.find(css).text.strip() not in ("", "…"), seconds)
        return self.find(css).text.strip()

    def screenshot(self, name):
        """The page at full height (up to 2400 px), 1280 px wide."""
        folder = self.spec["screenshots"]
        os.makedirs(folder, exist_ok=True)
        height = self.browser.script("return document.documentElement.scrollHeight")
        self.browser.resize(WIDTH, max(HEIGHT, min(height, 2400)))
        self.browser.script("window.scrollTo(0, 0)")
        time.sleep(0.3)
        self.browser.screenshot(os.path.join(folder, name))
        self.browser.resize(WIDTH, HEIGHT)

    def session_cookie(self):
        cookie = self.browser.cookie("receipt_console")
        return cookie["value"] if cookie else None

    # ---- the checks, in the order they run

    def sign_in(self):
        self.browser.get(self.base + "/console/")
        redirected_to = self.browser.url
        self.wait(lambda browser: self.find("#token"))
        failed_hidden_at_first = not self.find("#sign-in-failed").is_displayed()
        self.screenshot("sign-in.png")
        self.find("#token").send_keys("not-the-token-0123456789abcdef0123456789" + ENTER)
        self.wait(lambda browser: "failed=1" in browser.url)
        self.wait(lambda browser: self.find("#sign-in-failed").is_displayed())
        failed_message = self.find("#sign-in-failed").text
        wrong_token_cookie = self.session_cookie()
        self.find("#token").send_keys(self.spec["token"])
        self.find("#sign-in-button").click()
        self.wait(lambda browser: browser.url.split("#")[0].endswith("/console/"))
        cookie = self.browser.cookie("receipt_console")
        return {
            "redirected_to": redirected_to,
            "failed_hidden_at_first": failed_hidden_at_first,
            "failed_message": failed_message,
            "cookie_after_wrong_token": wrong_token_cookie,
            "signed_in_url": self.browser.url,
            "cookie_http_only": cookie["httpOnly"] if cookie else None,
            "cookie_same_site": cookie.get("sameSite") if cookie else None,
            "cookie_path": cookie["path"] if cookie else None,
            "cookie_length": len(cookie["value"]) if cookie else 0,
            "session_visible_to_script": "receipt_console" in self.browser.script("return document.cookie"),
        }

    def overview(self):
        self.browser.get(self.base + "/console/#overview")
        health = self.wait_for_text("#overview-health")
        transactions = self.wait_for_text("#overview-transactions")
        self.wait(lambda browser: len(self.find_all("#overview-chart g.bar")) > 0)
        bars = len(self.find_all("#overview-chart g.bar"))
        bars_with_title = len(self.find_all("#overview-chart g.bar > title"))
        error_rects = len(self.find_all("#overview-chart rect.errors"))
        self.screenshot("overview.png")
        fetches = "return performance.getEntriesByType('resource')" \
                  ".filter(e => e.name.endsWith('/console/api/overview')).length"
        before = self.browser.script(fetches)
        time.sleep(10.5)
        after = self.browser.script(fetches)
        return {
            "health": health,
            "transactions": transactions,
            "bars": bars,
            "bars_with_title": bars_with_title,
            "error_rects": error_rects,
            "refreshes_in_10_5_s": after - before,
        }

    def show_inspection(self, start):
        def answered(browser):
            status = self.find("#inspect-status")
            if "failure" in status.get_attribute("class"):
                return True
            return status.text == "" and self.find("#inspect-verdict").text != ""

        self.wait(answered)
        status = self.find("#inspect-status").text
        failure = self.find("#inspect-failure")
        names = [item.text for item in self.find_all("#inspect-fields > dl > dt")]
        values = [item.text for item in self.find_all("#inspect-fields > dl > dd")]
        chain = [[cell.text for cell in row.find_elements(TAG, "td")]
                 for row in self.find_all("#inspect-chain tbody tr")]
        return {
            "status": status,
            "verdict": self.find("#inspect-verdict").text,
            "summary": self.find("#inspect-summary").text,
            "failure_shown": failure.is_displayed(),
            "failure": failure.text,
            "fields": dict(zip(names, [value[:200] for value in values])),
            "chain": chain,
            "device": self.find("#inspect-device").text,
            "seconds": round(time.time() - start, 2),
        }

    def inspect_valid(self):
        self.page("inspect")
        start = time.time()
        self.find("#inspect-file").send_keys(os.path.abspath(self.spec["receipt_file"]))
        result = self.show_inspection(start)
        self.screenshot("inspect.png")
        return result

    def inspect_tampered(self):
        self.page("inspect")
        self.browser.script("document.getElementById('inspect-verdict').textContent = ''")
        with open(self.spec["tampered_base64"]) as file:
            tampered = file.read().strip()
        area = self.find("#inspect-input")
        area.clear()
        # Typing 9 KB key by key takes long; the value is set, then a key typed so the page sees input.
        self.browser.script("arguments[0].value = arguments[1]", area, tampered[:-1])
        area.send_keys(tampered[-1])
        start = time.time()
        self.find("#inspect-button").click()
        return self.show_inspection(start)

    def customer(self):
        self.page("customer")
        box = self.find("#customer-query")
        box.clear()
        box.send_keys(self.spec["customer"] + ENTER)
        self.wait(lambda browser: self.find("#customer-result").is_displayed())
        timeline = "#customer-timeline "
        marks = self.find_all(timeline + "rect, " + timeline + "circle")
        rows = [[cell.text for cell in row.find_elements(TAG, "td")]
                for row in self.find_all("#customer-transactions tbody tr")]
        result = {
            "customer_id": self.find("#customer-id").text,
            "transactions": rows,
            "renewals": [[cell.text for cell in row.find_elements(TAG, "td")]
                         for row in self.find_all("#customer-renewals tbody tr")],
            "entitlements": self.find("#customer-entitlements").text,
            "periods": len(self.find_all(timeline + "rect.period")),
            "grace": len(self.find_all(timeline + "rect.grace")),
            "retry": len(self.find_all(timeline + "rect.retry")),
            "refunds": len(self.find_all(timeline + "rect.refund")),
            "purchases": len(self.find_all(timeline + "circle.purchase")),
            "marks_without_title": sum(1 for mark in marks if not mark.find_elements(TAG, "title")),
            "axis_labels": [label.text for label in self.find_all(timeline + "text.label")
                            if label.text[:2] in ("19", "20")],
        }
        self.screenshot("customer.png")
        return result

    def xss(self):
        """After the customer check: the markup product id is cell text, and nothing ran or was made from it."""
        alert_text = self.browser.dismiss_alert()
        cells = [cell.text for cell in self.find_all("#customer-transactions tbody td")]
        return {
            "alert": alert_text,
            "shown_as_text": self.spec["xss_product"] in cells,
            "img_elements": self.browser.script("return document.getElementsByTagName('img').length"),
            "onerror_attributes": len(self.find_all("[onerror]")),
        }

    def notifications(self):
        self.page("notifications")
        self.wait(lambda browser: self.find("#notifications-status").text == "")

        def table(css):
            return [[cell.text for cell in row.find_elements(TAG, "td")]
                    for row in self.find_all(css + " tbody tr")]

        result = {"received": table("#notifications-received"), "sent": table("#notifications-sent")}
        self.screenshot("notifications.png")
        return result

    def keyboard(self):
        """Tab from the top of the page: which elements take focus, and whether the focus is drawn."""
        self.browser.get(self.base + "/console/#inspect")
        self.wait(lambda browser: self.find("#inspect").is_displayed())
        # A click on the brand, above everything, starts the Tab order at the top, as a person's click would.
        self.find(".brand").click()
        reached = []
        outlines = {}
        # Past the last control the focus leaves the page: in Firefox into the browser's own bar, where these
        # synthetic keys cannot follow it; so each control's focus is read the first time it is reached.
        for _ in range(10):
            self.browser.press(TAB)
            active = self.browser.active_element()
            name = active.get_attribute("id") or active.tag_name
            reached.append(name)
            outlines.setdefault(name, active.value_of_css_property("outline-style"))
        # A nav link followed with Enter shows its page.
        self.find("#nav-customer").send_keys(ENTER)
        self.wait(lambda browser: self.find("#customer").is_displayed())
        return {
            "reached": reached,
            "outlines": outlines,
            "buttons": [button.get_attribute("id") for button in self.find_all("button")],
            "enter_on_nav_shows": self.browser.url.split("#")[-1],
        }

    def narrow(self):
        """At 360 px the page never scrolls sideways; wide tables scroll in their own box."""
        self.browser.narrow(True)
        widths = {}
        try:
            for section in ["overview", "inspect", "customer", "notifications"]:
                self.page(section)
                time.sleep(0.3)
                widths[section] = self.browser.script(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            boxes = self.browser.script(
                "return [...document.querySelectorAll('.table-box')].map(box => getComputedStyle(box).overflowX)")
        finally:
            self.browser.narrow(False)
        return {"widths": widths, "table_box_overflow": sorted(set(boxes))}

    def dark(self):
        def background():
            return self.browser.script("return getComputedStyle(document.body).backgroundColor")

        light = background()
        self.browser.prefer_dark(True)
        dark = background()
        self.browser.prefer_dark(False)
        return {"light": light, "dark": dark}

    def headers(self):
        """Security headers of the pages, read by plain HTTP with the browser's session cookie."""
        cookie = self.session_cookie()
        answers = {}
        for path, with_cookie in [("/console/sign-in", False), ("/console/", True), ("/console/console.js", True),
                                  ("/console/console.css", False), ("/console/api/session", True)]:
            answers[path] = fetch(self.base + path, cookie if with_cookie else None)
        return answers

    def sign_out(self):
        cookie = self.session_cookie()
        self.browser.get(self.base + "/console/#overview")
        self.wait(lambda browser: self.find("#sign-out-button").is_displayed())
        self.find("#sign-out-button").click()
        self.wait(lambda browser: browser.url.endswith("/console/sign-in"))
        after_url = self.browser.url
        self.browser.get(self.base + "/console/")
        return {
            "after_sign_out": after_url,
            "cookie_left": self.session_cookie(),
            "old_session_api": fetch(self.base + "/console/api/overview", cookie)["status"],
            "old_session_page": fetch(self.base + "/console/", cookie)["status"],
            "console_afterwards": self.browser.url,
        }


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments):
        return None


def fetch(url, cookie):
    """GET `url` (with the console cookie when given), redirects not followed: status and the security headers."""
    request = urllib.request.Request(url)
    if cookie:
        request.add_header("Cookie", "receipt_console=" + cookie)
    try:
        response = urllib.request.build_opener(NoRedirect).open(request, timeout=15)
    except urllib.error.HTTPError as error:
        response = error
    answer = {"status": response.status, "location": response.headers.get("Location"),
              "content_type": response.headers.get("Content-Type")}
    for name in SECURITY_HEADERS:
        answer[name] = response.headers.get(name)
    return answer


def no_session(spec):
    """A fresh browser profile: the console page sends it to sign-in and the API answers 401."""
    browser = BROWSERS[spec["browser"]](spec["browser_log"] + ".fresh")
    try:
        browser.get(spec["base_url"] + "/console/")
        page = browser.url
        answer = browser.async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch('/console/api/overview', {credentials: 'same-origin'})"
            ".then(async r => done({status: r.status, body: await r.text()}))"
            ".catch(e => done({status: null, body: String(e)}))")
        return {"console_page": page, "api_status": answer["status"], "api_body": answer["body"]}
    finally:
        browser.quit()


def csp_canary(console):
    """Breaks the policy on purpose: an inline script added to the sign-in page must not run, and the violation
    must reach the log this driver reads, or that log's silence about the real pages would prove nothing."""
    console.collect_log()
    console.browser.get(console.base + "/console/sign-in")
    console.browser.script(
        "const script = document.createElement('script');"
        "script.textContent = 'document.documentElement.dataset.canary = \"ran\"';"
        "document.body.append(script)")
    time.sleep(0.5)
    lines = wait(lambda: [line for line in console.browser.log() if line["csp"]], 10)
    return {"ran": console.browser.script("return document.documentElement.dataset.canary || null"),
            "reported": [line["message"] for line in lines]}


def run(check):
    try:
        return check()
    except Exception as error:  # a check that failed reports why; the other checks still run
        return {"error": f"{type(error).__name__}: {error}", "trace": traceback.format_exc(limit=4)}


def stopped(signal_number, frame):
    raise SystemExit("stopped by SIGTERM: the run took too long")  # unwinds through the finally that quits


def main():
    signal.signal(signal.SIGTERM, stopped)
    spec = json.load(sys.stdin)
    console = Console(spec)
    results = {}
    try:
        for name in ["sign_in", "overview", "inspect_valid", "inspect_tampered", "customer", "xss", "notifications",
                     "keyboard", "narrow", "dark", "headers", "sign_out"]:
            results[name] = run(getattr(console, name))
            console.collect_log()
        results["csp_violations"] = [line["message"] for line in console.log if line["csp"]]
        results["console_errors"] = [line["message"] for line in console.log if line["error"] and not line["csp"]]
        results["csp_canary"] = run(lambda: csp_canary(console))
    finally:
        console.browser.quit()
    results["no_session"] = run(lambda: no_session(spec))
    results["browser"] = console.browser.name
    json.dump(results, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
