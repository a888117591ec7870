import Foundation
import PostgreSQLTestSupport
import ReceiptModel
import StrictJSON
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("receipt serve as a process: notifications acknowledged survive SIGKILL")
struct AppleNotificationProcessTests {
    /// A configuration over the ledger `ledger` (a SQLite file name or a PostgreSQL URI) that accepts the
    /// development chain's notifications for the fixture's app.
    func configFile(_ files: ConfigurationTests.Files, ledger: String) throws -> String {
        let members = [
            #""listen":"127.0.0.1:0""#, #""environment":"Production""#, #""ledger":"\#(ledger)""#,
            #""trust":["root.pem"]"#, #""tokens":["\#(ServiceFixture.token)"]"#,
            #""apple_notifications":{"trust":["root.pem"],"bundle_ids":["\#(AppleNotificationFixture.bundleID)"],"#
                + #""app_apple_ids":[\#(AppleNotificationFixture.appAppleID)]}"#,
        ]
        try files.write("config.json", "{\(members.joined(separator: ","))}")
        return files.directory.appendingPathComponent("config.json").path
    }

    /// Delivers `body` to `server`; the reply, or nil when the connection failed.
    static func deliver(_ body: String, to server: ServeProcess) -> HTTPReply? {
        guard let url = URL(string: server.url + "/v1/notifications/apple") else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        return try? HTTPReply.fetch(request)
    }

    @Test(
        "killed with SIGKILL while notifications arrive, the restarted server knows every acknowledged one",
        arguments: LedgerKind.allCases)
    func crashSafety(ledger: LedgerKind) throws {
        let files = try ConfigurationTests.Files()
        let location = ledger == .postgresql ? try PostgreSQLTestServer.shared().createDatabase() : "ledger.sqlite"
        let path = try configFile(files, ledger: location)
        let bodies = try (0..<400).map { index in
            try AppleNotificationFixture.body(
                "ONE_TIME_CHARGE",
                transaction: AppleNotificationFixture.Purchase(
                    purchase: InAppPurchase(
                        productID: "com.example.removeads", transactionID: "9\(index)",
                        purchaseDate: AppleNotificationFixture.day(1), quantity: 1),
                    appAccountToken: "00000000-0000-4000-8000-\(String(format: "%012d", index))"))
        }
        let server = try ServeProcess(config: path)
        let indices = Acknowledged.killWhileWriting(server, writers: 2, total: bodies.count, until: 60) { index in
            Self.deliver(bodies[index], to: server)?.status == 200
        }
        #expect(indices.count >= 60)

        let restarted = try ServeProcess(config: path)
        for index in indices {
            let reply = try #require(Self.deliver(bodies[index], to: restarted), "\(index)")
            #expect(reply.status == 200, "\(index)")
            #expect(try reply.json()["duplicate"] == .bool(true), "\(index)")
        }
        let health = try restarted.get("/healthz").json()
        guard case .number(let count)? = health["ledger_transactions"], let stored = Int(count) else {
            Issue.record("no ledger_transactions in \(health)")
            return
        }
        // Every acknowledged transaction, and at most the two in flight when the process died.
        #expect(stored >= indices.count && stored <= indices.count + 2)
        restarted.signal(SIGTERM)
    }
}
