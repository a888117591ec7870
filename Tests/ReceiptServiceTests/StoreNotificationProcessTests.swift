import Foundation
import PostgreSQLTestSupport
import ReceiptJWS
import StrictJSON
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("receipt serve as a process: the outbox survives SIGKILL")
struct StoreNotificationProcessTests {
    /// A configuration with `store_api` for `receiverURL`, signing with the apple-compatible chain, over `ledger`.
    func configFile(_ files: ConfigurationTests.Files, ledger: String, receiverURL: String) throws -> String {
        let chain = StoreAPIFixture.chain
        try files.write("apple-root.pem", chain.root.pemEncoded)
        try files.write("apple-intermediate.pem", chain.intermediate.pemEncoded)
        try files.write("apple-signer.pem", chain.signer.pemEncoded)
        try files.write("apple-signer.key", chain.signerKey.pkcs8PEM)
        try files.write("api.pub.pem", StoreAPIFixture.apiKey.publicKeyPEM)
        try files.write("store-catalog.json", StoreAPIFixture.catalog)
        let retries = Array(repeating: "2", count: 10).joined(separator: ",")
        let members = [
            #""listen":"127.0.0.1:0""#, #""environment":"Production""#, #""ledger":"\#(ledger)""#,
            #""trust":["apple-root.pem"]"#, #""tokens":["\#(ServiceFixture.token)"]"#,
            #""signing":{"key":"apple-signer.key","certificate":"apple-signer.pem","chain":["apple-intermediate.pem"]}"#,
            #""catalogs":{"game":"store-catalog.json"}"#,
            #""store_api":{"apps":[{"bundle_id":"\#(StoreAPIFixture.bundleID)","app_apple_id":\#(StoreAPIFixture.appAppleID),"#
                + #""catalog_id":"game","notification_urls":["\#(receiverURL)"]}],"#
                + #""keys":[{"issuer_id":"\#(StoreAPIFixture.issuerID)","key_id":"\#(StoreAPIFixture.keyID)","#
                + #""public_key":"api.pub.pem"}],"notification_retry_seconds":[\#(retries)]}"#,
        ]
        try files.write("config.json", "{\(members.joined(separator: ","))}")
        return files.directory.appendingPathComponent("config.json").path
    }

    /// The `notificationUUID` and the transaction id of a delivered body.
    static func decode(_ body: [UInt8]) throws -> (uuid: String, transactionID: String) {
        guard case .string(let payload)? = try JSONValue(parsing: body)["signedPayload"] else {
            throw FixtureError("no signedPayload in \(String(decoding: body, as: UTF8.self))")
        }
        let notification = try JWSVerifier.decodeUnverified(Array(payload.utf8)).payload
        guard case .string(let uuid)? = notification["notificationUUID"],
            case .object(let data)? = notification["data"], case .string(let signed)? = data["signedTransactionInfo"],
            case .string(let id)? = try JWSVerifier.decodeUnverified(Array(signed.utf8)).payload["transactionId"]
        else {
            throw FixtureError("unexpected notification \(notification)")
        }
        return (uuid, id)
    }

    @Test(
        "killed with SIGKILL while purchases are recorded, the restarted server sends each acknowledged one's notification, accepted once",
        arguments: LedgerKind.allCases)
    func crashSafety(ledger: LedgerKind) throws {
        let receiver = try NotificationReceiver(failures: Int.max)
        let files = try ConfigurationTests.Files()
        let location = ledger == .postgresql ? try PostgreSQLTestServer.shared().createDatabase() : "ledger.sqlite"
        let path = try configFile(files, ledger: location, receiverURL: receiver.url)
        let server = try ServeProcess(config: path)
        let acknowledged = Acknowledged.killWhileWriting(server, writers: 2, total: 400, until: 40) { index in
            server.post(
                "/v1/transactions",
                json: StoreAPIFixture.purchase("alice", StoreAPITests.coins, "\(7000 + index)", day: 1))
                == 201
        }
        let ids = Set(acknowledged.map { String(7000 + $0) })
        #expect(ids.count >= 40)

        receiver.answerSuccess()
        let restarted = try ServeProcess(config: path)
        // A few seconds, or the lease (20 s) for notifications the killed server had taken.
        var accepted: [(uuid: String, transactionID: String)] = []
        let waitUntil = Date().addingTimeInterval(60)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            accepted = try receiver.accepted.map(Self.decode)
        } while !ids.isSubset(of: Set(accepted.map(\.transactionID))) && Date() < waitUntil
        restarted.signal(SIGTERM)
        let acceptedIDs = Set(accepted.map(\.transactionID))
        #expect(ids.isSubset(of: acceptedIDs), "missing: \(ids.subtracting(acceptedIDs).sorted())")
        #expect(Set(accepted.map(\.uuid)).count == accepted.count, "each notification accepted once")
        #expect(acceptedIDs.count == accepted.count, "one notification per transaction")
        #expect(acceptedIDs.count <= ids.count + 2, "besides the acknowledged, at most the two in flight")
    }
}
