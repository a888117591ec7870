"""Drives the service's web console in headless Chromium (Selenium, /usr/bin/chromium and /usr/bin/chromedriver).

Reads one JSON document on standard input:
  {"base_url", "token", "screenshots" (a directory), "receipt_file" (a valid receipt, DER), "tampered_base64" (the
   same receipt with one byte of its signature changed, base64), "customer" (a customer id), "xss_product" (a
   product id made of markup)}
and prints one JSON object: for each check below, what the browser saw ({"error": TEXT} when the check could not
finish), plus "csp_violations" and "console_errors", the browser log lines of the whole run that mention
"Content Security Policy", and every other SEVERE line. The checks run in this order in one signed-in browser
(sign_out last); no_session uses a fresh profile.

Checks: sign_in, overview, inspect_valid, inspect_tampered, customer, xss, notifications, keyboard, narrow, dark,
headers, no_session, sign_out. Screenshots (1280 px wide): sign-in.png, overview.png, inspect.png, customer.png,
notifications.png.
"""

import json
import os
import sys
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

WIDTH, HEIGHT, NARROW = 1280, 900, 360
SECURITY_HEADERS = [
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "X-Frame-Options",
    "Cache-Control",
]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WIDTH},{HEIGHT}"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_window_size(WIDTH, HEIGHT)
    return driver


class Console:
    """One browser on the console, and the log lines it wrote."""

    def __init__(self, spec):
        self.spec = spec
        self.base = spec["base_url"]
        self.driver = browser()
        self.log = []

    def wait(self, condition, seconds=15):
        return WebDriverWait(self.driver, seconds).until(condition)

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def collect_log(self):
        self.log.extend(self.driver.get_log("browser"))

    def page(self, section):
        """Shows `section` with its nav link, as a person would."""
        self.find(f"#nav-{section}").click()
        self.wait(lambda driver: self.find(f"#{section}").is_displayed())

    def wait_for_text(self, css, seconds=15):
        self.wait(lambda driver: self.find(css).text.strip() not in ("", "…"), seconds)
        return self.find(css).text.strip()

    def screenshot(self, name):
        """The page at full height (up to 2400 px), 1280 px wide."""
        folder = self.spec["screenshots"]
        os.makedirs(folder, exist_ok=True)
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.set_window_size(WIDTH, max(HEIGHT, min(height, 2400)))
        self.driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.3)
        self.driver.save_screenshot(os.path.join(folder, name))
        self.driver.set_window_size(WIDTH, HEIGHT)

    def session_cookie(self):
        cookie = self.driver.get_cookie("receipt_console")
        return cookie["value"] if cookie else None

    # ---- the checks, in the order they run

    def sign_in(self):
        self.driver.get(self.base + "/console/")
        redirected_to = self.driver.current_url
        self.wait(expected_conditions.presence_of_element_located((By.ID, "token")))
        failed_hidden_at_first = not self.find("#sign-in-failed").is_displayed()
        self.screenshot("sign-in.png")
        self.find("#token").send_keys("not-the-token-0123456789abcdef0123456789" + Keys.ENTER)
        self.wait(lambda driver: "failed=1" in driver.current_url)
        self.wait(lambda driver: self.find("#sign-in-failed").is_displayed())
        failed_message = self.find("#sign-in-failed").text
        wrong_token_cookie = self.session_cookie()
        self.find("#token").send_keys(self.spec["token"])
        self.find("#sign-in-button").click()
        self.wait(lambda driver: driver.current_url.split("#")[0].endswith("/console/"))
        cookie = self.driver.get_cookie("receipt_console")
        return {
            "redirected_to": redirected_to,
            "failed_hidden_at_first": failed_hidden_at_first,
            "failed_message": failed_message,
            "cookie_after_wrong_token": wrong_token_cookie,
            "signed_in_url": self.driver.current_url,
            "cookie_http_only": cookie["httpOnly"] if cookie else None,
            "cookie_same_site": cookie.get("sameSite") if cookie else None,
            "cookie_path": cookie["path"] if cookie else None,
            "cookie_length": len(cookie["value"]) if cookie else 0,
            "session_visible_to_script": "receipt_console" in self.driver.execute_script("return document.cookie"),
        }

    def overview(self):
        self.driver.get(self.base + "/console/#overview")
        health = self.wait_for_text("#overview-health")
        transactions = self.wait_for_text("#overview-transactions")
        self.wait(lambda driver: len(self.find_all("#overview-chart g.bar")) > 0)
        bars = len(self.find_all("#overview-chart g.bar"))
        bars_with_title = len(self.find_all("#overview-chart g.bar > title"))
        error_rects = len(self.find_all("#overview-chart rect.errors"))
        self.screenshot("overview.png")
        fetches = "return performance.getEntriesByType('resource')" \
                  ".filter(e => e.name.endsWith('/console/api/overview')).length"
        before = self.driver.execute_script(fetches)
        time.sleep(10.5)
        after = self.driver.execute_script(fetches)
        return {
            "health": health,
            "transactions": transactions,
            "bars": bars,
            "bars_with_title": bars_with_title,
            "error_rects": error_rects,
            "refreshes_in_10_5_s": after - before,
        }

    def show_inspection(self, start):
        def answered(driver):
            status = self.find("#inspect-status")
            if "failure" in status.get_attribute("class"):
                return True
            return status.text == "" and self.find("#inspect-verdict").text != ""

        self.wait(answered)
        status = self.find("#inspect-status").text
        failure = self.find("#inspect-failure")
        names = [item.text for item in self.find_all("#inspect-fields > dl > dt")]
        values = [item.text for item in self.find_all("#inspect-fields > dl > dd")]
        chain = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
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
        self.driver.execute_script("document.getElementById('inspect-verdict').textContent = ''")
        with open(self.spec["tampered_base64"]) as file:
            tampered = file.read().strip()
        area = self.find("#inspect-input")
        area.clear()
        # Typing 9 KB key by key takes long; the value is set, then a key typed so the page sees input.
        self.driver.execute_script("arguments[0].value = arguments[1]", area, tampered[:-1])
        area.send_keys(tampered[-1])
        start = time.time()
        self.find("#inspect-button").click()
        return self.show_inspection(start)

    def customer(self):
        self.page("customer")
        box = self.find("#customer-query")
        box.clear()
        box.send_keys(self.spec["customer"] + Keys.ENTER)
        self.wait(lambda driver: self.find("#customer-result").is_displayed())
        timeline = "#customer-timeline "
        marks = self.find_all(timeline + "rect, " + timeline + "circle")
        rows = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                for row in self.find_all("#customer-transactions tbody tr")]
        result = {
            "customer_id": self.find("#customer-id").text,
            "transactions": rows,
            "renewals": [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                         for row in self.find_all("#customer-renewals tbody tr")],
            "entitlements": self.find("#customer-entitlements").text,
            "periods": len(self.find_all(timeline + "rect.period")),
            "grace": len(self.find_all(timeline + "rect.grace")),
            "retry": len(self.find_all(timeline + "rect.retry")),
            "refunds": len(self.find_all(timeline + "rect.refund")),
            "purchases": len(self.find_all(timeline + "circle.purchase")),
            "marks_without_title": sum(1 for mark in marks if not mark.find_elements(By.TAG_NAME, "title")),
            "axis_labels": [label.text for label in self.find_all(timeline + "text.label")
                            if label.text[:2] in ("19", "20")],
        }
        self.screenshot("customer.png")
        return result

    def xss(self):
        """After the customer check: the markup product id is cell text, and nothing ran or was made from it."""
        try:
            alert = self.driver.switch_to.alert
            alert_text = alert.text
            alert.dismiss()
        except NoAlertPresentException:
            alert_text = None
        cells = [cell.text for cell in self.find_all("#customer-transactions tbody td")]
        return {
            "alert": alert_text,
            "shown_as_text": self.spec["xss_product"] in cells,
            "img_elements": self.driver.execute_script("return document.getElementsByTagName('img').length"),
            "onerror_attributes": len(self.find_all("[onerror]")),
        }

    def notifications(self):
        self.page("notifications")
        self.wait(lambda driver: self.find("#notifications-status").text == "")

        def table(css):
            return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                    for row in self.find_all(css + " tbody tr")]

        result = {"received": table("#notifications-received"), "sent": table("#notifications-sent")}
        self.screenshot("notifications.png")
        return result

    def keyboard(self):
        """Tab from the top of the page: which elements take focus, and whether the focus is drawn."""
        self.driver.get(self.base + "/console/#inspect")
        self.wait(lambda driver: self.find("#inspect").is_displayed())
        self.driver.execute_script("document.activeElement.blur()")
        reached = []
        outlines = {}
        for _ in range(14):
            ActionChains(self.driver).send_keys(Keys.TAB).perform()
            active = self.driver.switch_to.active_element
            name = active.get_attribute("id") or active.tag_name
            reached.append(name)
            outlines[name] = active.value_of_css_property("outline-style")
        # A nav link followed with Enter shows its page.
        self.find("#nav-customer").send_keys(Keys.ENTER)
        self.wait(lambda driver: self.find("#customer").is_displayed())
        return {
            "reached": reached,
            "outlines": outlines,
            "buttons": [button.get_attribute("id") for button in self.find_all("button")],
            "enter_on_nav_shows": self.driver.current_url.split("#")[-1],
        }

    def narrow(self):
        """At 360 px the page never scrolls sideways; wide tables scroll in their own box."""
        self.driver.set_window_size(NARROW, HEIGHT)
        widths = {}
        try:
            for section in ["overview", "inspect", "customer", "notifications"]:
                self.page(section)
                time.sleep(0.3)
                widths[section] = self.driver.execute_script(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            boxes = self.driver.execute_script(
                "return [...document.querySelectorAll('.table-box')].map(box => getComputedStyle(box).overflowX)")
        finally:
            self.driver.set_window_size(WIDTH, HEIGHT)
        return {"widths": widths, "table_box_overflow": sorted(set(boxes))}

    def dark(self):
        def background():
            return self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")

        light = background()
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                    {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        dark = background()
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                    {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
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
        self.driver.get(self.base + "/console/#overview")
        self.wait(lambda driver: self.find("#sign-out-button").is_displayed())
        self.find("#sign-out-button").click()
        self.wait(lambda driver: driver.current_url.endswith("/console/sign-in"))
        after_url = self.driver.current_url
        self.driver.get(self.base + "/console/")
        return {
            "after_sign_out": after_url,
            "cookie_left": self.session_cookie(),
            "old_session_api": fetch(self.base + "/console/api/overview", cookie)["status"],
            "old_session_page": fetch(self.base + "/console/", cookie)["status"],
            "console_afterwards": self.driver.current_url,
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
    driver = browser()
    try:
        driver.get(spec["base_url"] + "/console/")
        page = driver.current_url
        answer = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch('/console/api/overview', {credentials: 'same-origin'})"
            ".then(async r => done({status: r.status, body: await r.text()}))"
            ".catch(e => done({status: null, body: String(e)}))")
        return {"console_page": page, "api_status": answer["status"], "api_body": answer["body"]}
    finally:
        driver.quit()


def run(check):
    try:
        return check()
    except Exception as error:  # a check that failed reports why; the other checks still run
        return {"error": f"{type(error).__name__}: {error}", "trace": traceback.format_exc(limit=4)}


def main():
    spec = json.load(sys.stdin)
    console = Console(spec)
    results = {}
    try:
        for name in ["sign_in", "overview", "inspect_valid", "inspect_tampered", "customer", "xss", "notifications",
                     "keyboard", "narrow", "dark", "headers", "sign_out"]:
            results[name] = run(getattr(console, name))
            console.collect_log()
    finally:
        console.driver.quit()
    results["no_session"] = run(lambda: no_session(spec))
    results["csp_violations"] = [line["message"] for line in console.log
                                 if "Content Security Policy" in line["message"]]
    results["console_errors"] = [line["message"] for line in console.log
                                 if line["level"] == "SEVERE" and "Content Security Policy" not in line["message"]]
    json.dump(results, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
