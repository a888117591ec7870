import Foundation
import PostgreSQLTestSupport
import ReceiptLedger
import StrictJSON
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("receipt serve on a PostgreSQL ledger, as a process")
struct PostgreSQLServeProcessTests {
    /// A configuration file over the development chain whose ledger is the PostgreSQL database `uri`.
    func configFile(_ files: ConfigurationTests.Files, ledger uri: String) throws -> String {
        let members = [
            #""listen":"127.0.0.1:0""#, #""environment":"Production""#, #""ledger":"\#(uri)""#,
            #""trust":["root.pem"]"#, #""signing":{"key":"signer.key","certificate":"signer.pem"}"#,
            #""tokens":["\#(ServiceFixture.token)"]"#, #""limits":{"threads":4,"ledger_connections":3}"#,
        ]
        try files.write("config.json", "{\(members.joined(separator: ","))}")
        return files.directory.appendingPathComponent("config.json").path
    }

    @Test("a transaction recorded through the server is in the PostgreSQL database, and /healthz counts it")
    func recordsInPostgreSQL() throws {
        let uri = try PostgreSQLTestServer.shared().createDatabase()
        let files = try ConfigurationTests.Files()
        let server = try ServeProcess(config: try configFile(files, ledger: uri))
        defer { server.signal(SIGTERM) }
        #expect(server.post("/v1/transactions", json: ServeProcessTests.transaction(7)) == 201)
        #expect(server.post("/v1/transactions", json: ServeProcessTests.transaction(7)) == 200)
        let health = try server.get("/healthz")
        #expect(health.status == 200)
        #expect(try JSONValue(parsing: health.body)["ledger_transactions"] == .integer(1))
        let ledger = try PostgreSQLLedger(uri: uri, connections: 1)
        #expect(try ledger.transaction(id: "7")?.customerID == "c0")
    }

    @Test("PostgreSQL restarted under load: 503 and 21009 while down, 201 and 200 after, nothing acknowledged lost")
    func databaseRestart() throws {
        let cluster = try PostgreSQLTestServer.privateCluster()
        let uri = try cluster.createDatabase()
        let files = try ConfigurationTests.Files()
        let server = try ServeProcess(config: try configFile(files, ledger: uri))
        defer { server.signal(SIGTERM) }
        for id in 0..<20 { #expect(server.post("/v1/transactions", json: ServeProcessTests.transaction(id)) == 201) }

        // Two writers go on through the outage, each a bounded number of requests, keeping what was acknowledged.
        let acknowledged = Acknowledged()
        let writers = DispatchGroup()
        for writer in 0..<2 {
            DispatchQueue.global().async(group: writers) {
                var id = 1_000 + writer
                for _ in 0..<20_000 where acknowledged.keepGoing {
                    if let status = server.post("/v1/transactions", json: ServeProcessTests.transaction(id)),
                        status == 201 || status == 200
                    {
                        acknowledged.add(id)
                    }
                    id += 2
                }
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while acknowledged.count < 40 && Date() < deadline { usleep(1_000) }
        try cluster.stop()

        #expect(server.post("/v1/transactions", json: ServeProcessTests.transaction(999_999)) == 503)
        let health = try server.get("/healthz")
        #expect(health.status == 503)
        #expect(health.errorCode == "ledger_unavailable")
        #expect(health.text.contains("the ledger's database cannot be reached"), "\(health.text)")
        #expect(!health.text.contains("transaction") && !health.text.contains("socket"), "\(health.text)")
        let receipt = try ServiceFixture.signed(sampleReceipt(purchases: [("com.example.pro", "1", 0)]))
        guard let url = URL(string: server.url + "/verifyReceipt") else { throw FixtureError("bad URL") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(ServiceFixture.verifyRequest(receipt).utf8)
        let verify = try HTTPReply.fetch(request)
        #expect(try JSONValue(parsing: verify.body)["status"] == .integer(21009))
        let duringOutage = acknowledged.count

        try cluster.start()
        // The pool replaces its lost connections by itself: the first requests after the restart succeed.
        #expect(try server.get("/healthz").status == 200)
        #expect(server.post("/v1/transactions", json: ServeProcessTests.transaction(999_999)) == 201)
        let resumed = Date().addingTimeInterval(30)
        while acknowledged.count < duringOutage + 20 && Date() < resumed { usleep(1_000) }
        acknowledged.stop()
        writers.wait()
        #expect(acknowledged.count >= duringOutage + 20, "the writers recovered")

        let ids = Array(0..<20) + acknowledged.ids + [999_999]
        for id in ids {
            #expect(server.post("/v1/transactions", json: ServeProcessTests.transaction(id)) == 200, "\(id)")
        }
        let ledger = try PostgreSQLLedger(uri: uri, connections: 1)
        #expect(try ledger.integrityCheck() == ["ok"])
        // At most the requests in flight when the server stopped were stored without being acknowledged.
        let count = try ledger.count()
        #expect(count >= ids.count && count <= ids.count + 2, "\(count) stored, \(ids.count) acknowledged")
    }
}
