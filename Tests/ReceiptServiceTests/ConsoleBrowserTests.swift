import Foundation
import ReceiptCrypto
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// The console in real browsers: headless Chromium driven by Selenium and headless Firefox driven over its own
/// Marionette protocol (`Clients/console_browser.py`, one scenario for both, on the project's virtual environment;
/// `.ci/setup --tests` installs the browsers and the Python packages), each against a real server of its own whose
/// ledger was filled through the service's own endpoints. Each browser runs once; each test reads, for each browser,
/// what it saw of one behaviour. Chromium's screenshots go to `$CONSOLE_SCREENSHOTS` when set (the README's are
/// made so, into examples/console); Firefox's, and Chromium's otherwise, to the server's temporary directory.
@Suite("The console, driven in a browser")
struct ConsoleBrowserTests {
    /// The browsers the console must work in.
    enum Browser: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case chromium, firefox

        var testDescription: String { rawValue }
    }

    static let customer = "alice"
    static let markupProduct = "<img src=x onerror=alert(1)>"
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let realReceipt = packageRoot.appendingPathComponent(
        "Tests/ReceiptVerifierTests/Vectors/real/tpinappreceipt/receipt-production.der")
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    static let screenshots = ["overview.png", "inspect.png", "customer.png", "notifications.png", "sign-in.png"]

    /// What Chromium saw, or why the run could not happen.
    static let chromium = BrowserRun.attempt(.chromium)
    /// What Firefox saw, or why the run could not happen.
    static let firefox = BrowserRun.attempt(.firefox)

    static func run(_ browser: Browser) throws -> BrowserRun {
        switch browser {
        case .chromium: try chromium.get()
        case .firefox: try firefox.get()
        }
    }

    /// The result of check `name` in `browser`, failing the test when the check could not finish.
    func check(_ name: String, in browser: Browser, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> JSONValue
    {
        let results = try Self.run(browser).results
        let result = try #require(
            results[name], "the \(browser) driver reported no \(name)", sourceLocation: sourceLocation)
        if case .string(let error)? = result["error"] {
            Issue.record("\(name) did not finish in \(browser): \(error)", sourceLocation: sourceLocation)
        }
        return result
    }

    @Test(
        "the console page sends a browser without a session to sign-in; a wrong token is refused with a message",
        arguments: Browser.allCases)
    func signIn(browser: Browser) throws {
        let signIn = try check("sign_in", in: browser)
        #expect(signIn["redirected_to"]?.stringValue?.hasSuffix("/console/sign-in") == true)
        #expect(signIn["failed_hidden_at_first"] == .bool(true))
        #expect(signIn["failed_message"]?.stringValue?.contains("not accepted") == true)
        #expect(signIn["cookie_after_wrong_token"] == .null)
        #expect(signIn["signed_in_url"]?.stringValue?.contains("/console/") == true)
    }

    @Test(
        "the session cookie is 43 characters, HttpOnly, SameSite=Strict, under /console, invisible to script",
        arguments: Browser.allCases)
    func sessionCookie(browser: Browser) throws {
        let signIn = try check("sign_in", in: browser)
        #expect(signIn["cookie_length"] == .integer(43))
        #expect(signIn["cookie_http_only"] == .bool(true))
        #expect(signIn["cookie_same_site"] == .string("Strict"))
        #expect(signIn["cookie_path"] == .string("/console"))
        #expect(signIn["session_visible_to_script"] == .bool(false))
    }

    @Test(
        "the overview shows health, the ledger's size and a bar per minute with its numbers, refreshed in 10 s",
        arguments: Browser.allCases)
    func overview(browser: Browser) throws {
        let overview = try check("overview", in: browser)
        #expect(overview["health"] == .string("ok"))
        #expect(overview["transactions"] == .string(String(BrowserRun.transactionCount)))
        let bars = overview["bars"]?.integerValue ?? 0
        #expect(bars > 0)
        #expect(overview["bars_with_title"]?.integerValue == bars)
        #expect((overview["refreshes_in_10_5_s"]?.integerValue ?? 0) >= 1)
    }

    @Test(
        "a real Apple receipt dropped in as a DER file is valid, with its fields and its chain",
        arguments: Browser.allCases)
    func inspectRealReceipt(browser: Browser) throws {
        let inspected = try check("inspect_valid", in: browser)
        #expect(inspected["status"] == .string(""))
        #expect(inspected["verdict"] == .string("valid"))
        #expect(inspected["failure_shown"] == .bool(false))
        #expect(inspected["fields"]?["bundle_id"] == .string("org.getpure.pure-iphone"))
        guard case .array(let chain)? = inspected["chain"] else {
            Issue.record("no chain rows")
            return
        }
        #expect(chain.count >= 2)
        for certificate in chain { #expect(certificate[4] == .string("valid")) }
    }

    @Test(
        "the same receipt with one byte of its signature changed, pasted as base64, is invalid and says why",
        arguments: Browser.allCases)
    func inspectTamperedReceipt(browser: Browser) throws {
        let inspected = try check("inspect_tampered", in: browser)
        #expect(inspected["verdict"] == .string("invalid"))
        #expect(inspected["failure_shown"] == .bool(true))
        #expect(inspected["failure"]?.stringValue?.contains("signature") == true)
    }

    @Test(
        "a customer's transactions are listed, one row each, product and transaction id as cell text",
        arguments: Browser.allCases)
    func customerTransactions(browser: Browser) throws {
        let customer = try check("customer", in: browser)
        #expect(customer["customer_id"] == .string(Self.customer))
        guard case .array(let rows)? = customer["transactions"] else {
            Issue.record("no transaction rows")
            return
        }
        #expect(rows.count == BrowserRun.transactionCount)
        let listed = Set(rows.map { "\($0[1]?.stringValue ?? "") \($0[2]?.stringValue ?? "")" })
        for purchase in BrowserRun.purchases() {
            #expect(listed.contains("\(purchase.productID) \(purchase.transactionID)"))
        }
        #expect(customer["renewals"]?[0]?[1] == .string("7000"))
        #expect(customer["entitlements"]?.stringValue?.contains("pro") == true)
    }

    @Test(
        "the timeline: three periods and a grace band with billing retry, three purchase circles, one refund",
        arguments: Browser.allCases)
    func customerTimeline(browser: Browser) throws {
        let customer = try check("customer", in: browser)
        #expect(customer["periods"] == .integer(3))
        #expect(customer["grace"] == .integer(1))
        #expect(customer["retry"] == .integer(1))
        #expect(customer["purchases"] == .integer(3))
        #expect(customer["refunds"] == .integer(1))
        #expect(customer["marks_without_title"] == .integer(0))
        guard case .array(let labels)? = customer["axis_labels"] else {
            Issue.record("no axis labels")
            return
        }
        #expect(labels.count >= 2)
    }

    @Test("a product id made of markup is shown as text: no alert, no <img> made from it", arguments: Browser.allCases)
    func markupIsText(browser: Browser) throws {
        let xss = try check("xss", in: browser)
        #expect(xss["alert"] == .null)
        #expect(xss["shown_as_text"] == .bool(true))
        #expect(xss["img_elements"] == .integer(0))
        #expect(xss["onerror_attributes"] == .integer(0))
    }

    @Test(
        "notifications: Apple's received one with its effects, the store's sent ones with their attempts",
        arguments: Browser.allCases)
    func notifications(browser: Browser) throws {
        let notifications = try check("notifications", in: browser)
        guard case .array(let received)? = notifications["received"],
            case .array(let sent)? = notifications["sent"]
        else {
            Issue.record("no notification tables")
            return
        }
        #expect(received.count == 1)
        #expect(received.first?[1]?.stringValue?.hasPrefix("DID_FAIL_TO_RENEW") == true)
        #expect(received.first?[5]?.stringValue?.contains("renewal info") == true)
        #expect(sent.count == BrowserRun.transactionCount + 1, "a notification per purchase and one for the refund")
        #expect(sent.contains { $0[1]?.stringValue == "REFUND" })
        #expect(sent.allSatisfy { $0[6]?.stringValue?.isEmpty == false }, "every sent one lists its attempts")
    }

    @Test(
        "keyboard: Tab reaches the pages, the form fields and the buttons, with a visible focus; Enter follows",
        arguments: Browser.allCases)
    func keyboard(browser: Browser) throws {
        let keyboard = try check("keyboard", in: browser)
        guard case .array(let reached)? = keyboard["reached"] else {
            Issue.record("nothing took focus")
            return
        }
        let ids = Set(reached.compactMap(\.stringValue))
        for id in [
            "nav-overview", "nav-inspect", "nav-customer", "nav-notifications", "sign-out-button", "inspect-input",
            "inspect-file", "inspect-button",
        ] {
            #expect(ids.contains(id), "\(id) takes focus")
            #expect(keyboard["outlines"]?[id] != .string("none"), "\(id) shows its focus")
        }
        #expect(keyboard["enter_on_nav_shows"] == .string("customer"))
    }

    @Test("at 360 px no page scrolls sideways; tables scroll in their own box", arguments: Browser.allCases)
    func narrowScreen(browser: Browser) throws {
        let narrow = try check("narrow", in: browser)
        for section in ["overview", "inspect", "customer", "notifications"] {
            let widths = narrow["widths"]?[section]
            #expect(
                (widths?[0]?.integerValue ?? .max) <= (widths?[1]?.integerValue ?? 0), "\(section) fits in 360 px")
            #expect((300...360).contains(widths?[1]?.integerValue ?? 0), "\(section) is shown 360 CSS pixels wide")
        }
        #expect(narrow["table_box_overflow"] == .array([.string("auto")]))
    }

    @Test("the colours follow the system's dark preference", arguments: Browser.allCases)
    func darkScheme(browser: Browser) throws {
        let dark = try check("dark", in: browser)
        #expect(dark["light"] != dark["dark"])
    }

    @Test(
        "every console answer has the CSP and the other security headers, with or without a session",
        arguments: Browser.allCases)
    func securityHeaders(browser: Browser) throws {
        let headers = try check("headers", in: browser)
        for path in ["/console/sign-in", "/console/", "/console/console.js", "/console/console.css"] {
            let answer = headers[path]
            #expect(answer?["status"] == .integer(200), "\(path)")
            #expect(answer?["Content-Security-Policy"] == .string(Self.contentSecurityPolicy), "\(path)")
            #expect(answer?["X-Content-Type-Options"] == .string("nosniff"), "\(path)")
            #expect(answer?["Referrer-Policy"] == .string("no-referrer"), "\(path)")
            #expect(answer?["X-Frame-Options"] == .string("DENY"), "\(path)")
            #expect(answer?["Cache-Control"] == .string("no-store"), "\(path)")
        }
        #expect(headers["/console/console.js"]?["content_type"] == .string("text/javascript; charset=utf-8"))
        #expect(headers["/console/api/session"]?["Content-Security-Policy"] == .string(Self.contentSecurityPolicy))
    }

    @Test("without a session, a fresh browser is sent to sign-in and the API answers 401", arguments: Browser.allCases)
    func noSession(browser: Browser) throws {
        let fresh = try check("no_session", in: browser)
        #expect(fresh["console_page"]?.stringValue?.hasSuffix("/console/sign-in") == true)
        #expect(fresh["api_status"] == .integer(401))
        #expect(fresh["api_body"]?.stringValue?.contains(#""code":"unauthorized""#) == true)
    }

    @Test("sign-out goes back to sign-in, and the old session is refused", arguments: Browser.allCases)
    func signOut(browser: Browser) throws {
        let signOut = try check("sign_out", in: browser)
        #expect(signOut["after_sign_out"]?.stringValue?.hasSuffix("/console/sign-in") == true)
        #expect(signOut["cookie_left"] == .null)
        #expect(signOut["old_session_api"] == .integer(401))
        #expect(signOut["old_session_page"] == .integer(303))
        #expect(signOut["console_afterwards"]?.stringValue?.hasSuffix("/console/sign-in") == true)
    }

    @Test("no page logged a Content Security Policy violation or any other error", arguments: Browser.allCases)
    func browserLog(browser: Browser) throws {
        let results = try Self.run(browser).results
        #expect(results["csp_violations"] == .array([]))
        #expect(results["console_errors"] == .array([]))
    }

    @Test(
        "an inline script added on purpose is blocked, and its violation reaches the log read above",
        arguments: Browser.allCases)
    func cspCanary(browser: Browser) throws {
        let canary = try check("csp_canary", in: browser)
        #expect(canary["ran"] == .null)
        guard case .array(let reported)? = canary["reported"] else {
            Issue.record("no violation was reported: \(canary)")
            return
        }
        #expect(!reported.isEmpty)
    }

    @Test("the scenario ran in the browser it was asked for", arguments: Browser.allCases)
    func browserName(browser: Browser) throws {
        #expect(try Self.run(browser).results["browser"] == .string(browser.rawValue))
    }

    @Test("a screenshot of every page was written", arguments: Browser.allCases)
    func screenshotsWritten(browser: Browser) throws {
        #expect(try Self.run(browser).screenshots == Self.screenshots.sorted())
    }
}

/// A server with the console on and a customer's history recorded, and what the browser driver saw of it.
struct BrowserRun: Sendable {
    static let transactionCount = 6
    let results: JSONValue
    /// The names of the screenshots written as PNG files.
    let screenshots: [String]

    /// A day `offset` days after 95 days ago (midnight UTC), so the subscription's last period ended 5 days ago.
    static func day(_ offset: Int) -> ReceiptDate {
        let today = ReceiptService.systemTime().millisecondsSince1970 / 86_400_000 * 86_400_000
        return ReceiptDate(millisecondsSince1970: today + Int64(offset - 95) * 86_400_000)
    }

    /// Three monthly periods of one subscription, and three one-time purchases, one of them named with markup.
    static func purchases() -> [InAppPurchase] {
        let periods = (0..<3).map { period in
            InAppPurchase(
                productID: AppleNotificationFixture.monthly, transactionID: period == 0 ? "7000" : "7000-\(period)",
                purchaseDate: day(30 * period), quantity: 1, originalTransactionID: "7000",
                originalPurchaseDate: day(0), expiresDate: day(30 * period + 30))
        }
        let oneTime = [
            ("com.example.removeads", "7100", 5), ("com.example.coins100", "7200", 40),
            (ConsoleBrowserTests.markupProduct, "7300", 70),
        ].map { product, transaction, offset in
            InAppPurchase(
                productID: product, transactionID: transaction, purchaseDate: day(offset), quantity: 1,
                originalTransactionID: transaction, originalPurchaseDate: day(offset))
        }
        return periods + oneTime
    }

    /// The run in `browser`, or why it could not happen.
    static func attempt(_ browser: ConsoleBrowserTests.Browser) -> Result<BrowserRun, FixtureError> {
        do {
            return .success(try start(browser))
        } catch let error as FixtureError {
            return .failure(error)
        } catch {
            return .failure(FixtureError("\(error)"))
        }
    }

    static func start(_ browser: ConsoleBrowserTests.Browser) throws -> BrowserRun {
        try requirements(of: browser)
        let appleRoot = try Certificate(
            derEncoded: [UInt8](
                try Data(
                    contentsOf: ConsoleBrowserTests.packageRoot.appendingPathComponent(
                        "certs/apple/AppleIncRootCertificate.cer"))))
        // Nothing listens on port 9 (discard): every notification the store sends fails and is retried.
        let store = try StoreAPIFixture(notificationURLs: ["http://127.0.0.1:9/apple"]) {
            $0.console = ServiceConfiguration.Console()
            $0.trustAnchors.append(appleRoot)
            $0.appleNotifications = ServiceConfiguration.AppleNotifications(
                trustAnchors: [ServiceFixture.chain.root], bundleIDs: [StoreAPIFixture.bundleID],
                appAppleIDs: [StoreAPIFixture.appAppleID])
        }
        let service = store.service
        for purchase in purchases() {
            var body = purchase.verifyReceiptJSON
            body["customer_id"] = .string(ConsoleBrowserTests.customer)
            body["bundle_id"] = .string(StoreAPIFixture.bundleID)
            try store.record(JSONValue.object(body).serialized())
        }
        let refund = try service.post(
            "/v1/transactions/7100/cancellation", json: #"{"cancellation_date":"\#(day(20).rfc3339)"}"#)
        guard refund.status == 200 || refund.status == 201 else {
            throw FixtureError("the refund was refused: \(refund.status) \(refund.text)")
        }
        let lastPeriod = AppleNotificationFixture.Purchase(purchase: purchases()[2])
        let renewal = AppleNotificationFixture.Renewal(
            original: "7000", billingRetry: true, graceEnds: day(106), expirationIntent: 2, signed: day(90))
        let notification = try AppleNotificationFixture.body(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: day(90), transaction: lastPeriod, renewal: renewal)
        let failed = try service.post("/v1/notifications/apple", json: notification, token: nil)
        guard failed.status == 200 else {
            throw FixtureError("the notification was refused: \(failed.status) \(failed.text)")
        }
        var receipt = [UInt8](try Data(contentsOf: ConsoleBrowserTests.realReceipt))
        receipt[receipt.count - 10] ^= 0x01  // inside the signature, the last field of the signed data
        let tampered = service.directory.appendingPathComponent("tampered.b64")
        try Data(Data(receipt).base64EncodedString().utf8).write(to: tampered)

        let chosen = browser == .chromium ? ProcessInfo.processInfo.environment["CONSOLE_SCREENSHOTS"] : nil
        let folder =
            chosen.map { URL(fileURLWithPath: $0, relativeTo: ConsoleBrowserTests.packageRoot) }
            ?? service.directory.appendingPathComponent("screenshots")
        let spec = JSONValue.object(
            JSONObject([
                "browser": .string(browser.rawValue),
                "browser_log": .string(service.directory.appendingPathComponent("\(browser).log").path),
                "base_url": .string(service.baseURL),
                "token": .string(ServiceFixture.token),
                "screenshots": .string(folder.path),
                "receipt_file": .string(ConsoleBrowserTests.realReceipt.path),
                "tampered_base64": .string(tampered.path),
                "customer": .string(ConsoleBrowserTests.customer),
                "xss_product": .string(ConsoleBrowserTests.markupProduct),
            ]))
        let results = try drive(spec, log: service.directory.appendingPathComponent("browser.log"))
        let written = ConsoleBrowserTests.screenshots.filter { name in
            let bytes = try? Data(contentsOf: folder.appendingPathComponent(name))
            return bytes?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true
        }
        return BrowserRun(results: results, screenshots: written.sorted())
    }

    /// The most a whole run may take; then the driver is stopped (it quits its browser) and the run fails.
    static let runSeconds: TimeInterval = 300

    /// Fails, saying what to install, when the project's Python, `browser` or what drives it is missing.
    static func requirements(of browser: ConsoleBrowserTests.Browser) throws {
        let python = PythonClientTests.python
        let (program, module, package) =
            switch browser {
            case .chromium: ("/usr/bin/chromedriver", "selenium", "selenium")
            case .firefox: ("/usr/bin/firefox-esr", "marionette_driver", "marionette-driver")
            }
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw FixtureError("no project Python at \(python.path): run .ci/setup --tests")
        }
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw FixtureError("no \(program) for the \(browser) tests: run .ci/setup --tests")
        }
        let check = Process()
        check.executableURL = python
        check.arguments = ["-c", "import \(module)"]
        check.standardError = FileHandle.nullDevice
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            throw FixtureError("the Python package \(package) is missing from .venv: run .ci/setup --tests")
        }
    }

    /// Runs the driver with `spec` on its standard input, for at most ``runSeconds``; its standard error goes to
    /// `log`.
    static func drive(_ spec: JSONValue, log: URL) throws -> JSONValue {
        let printed = log.deletingLastPathComponent().appendingPathComponent("browser-results.json")
        for file in [log, printed] {
            guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                throw FixtureError("\(file.path) could not be created")
            }
        }
        let driver = Process()
        driver.executableURL = PythonClientTests.python
        driver.arguments = [
            URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Clients/console_browser.py").path
        ]
        let input = Pipe()
        driver.standardInput = input
        driver.standardOutput = try FileHandle(forWritingTo: printed)
        driver.standardError = try FileHandle(forWritingTo: log)
        try driver.run()
        input.fileHandleForWriting.write(Data(spec.serializedBytes()))
        try input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(runSeconds)
        while driver.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        let complaint = { (try? String(contentsOf: log, encoding: .utf8)).map { String($0.suffix(4000)) } ?? "" }
        if driver.isRunning {
            driver.terminate()  // SIGTERM: the driver quits its browser on the way out
            let grace = Date().addingTimeInterval(20)
            while driver.isRunning && Date() < grace { Thread.sleep(forTimeInterval: 0.2) }
            if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
            driver.waitUntilExit()
            throw FixtureError("the browser driver took more than \(Int(runSeconds)) s and was stopped: \(complaint())")
        }
        guard driver.terminationStatus == 0 else {
            throw FixtureError("the browser driver failed: \(complaint())")
        }
        return try JSONValue(parsing: [UInt8](try Data(contentsOf: printed)))
    }
}

extension JSONValue {
    /// The string, when this is one.
    var stringValue: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// The integer, when this is one.
    var integerValue: Int64? {
        guard case .number(let text) = self else { return nil }
        return Int64(text)
    }
}
