import Foundation
import StrictJSON
import Testing

/// `receipt verify` and `receipt inspect` take every format a backend receives and say which one it was.
@Suite("Formats: one entry point for every purchase proof")
struct FormatTests {
    static let jwsVectors = "Tests/ReceiptJWSTests/Vectors"
    static let appleG3 = "certs/apple/AppleRootCA-G3.cer"

    func root(_ path: String) -> String { CLIRunner.packageRoot.appendingPathComponent(path).path }

    func verify(_ path: String, _ extra: [String]) throws -> (Int32, JSONValue) {
        let result = try CLIRunner().run(["verify", root(path), "--json"] + extra)
        return (result.status, try JSONValue(parsing: result.standardOutput))
    }

    @Test("a real StoreKit 2 signed transaction verifies under Apple Root CA - G3 as format jws, kind transaction")
    func signedTransaction() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/mingos-assa/sandbox-transaction.jws", ["--trust", root(Self.appleG3)])
        #expect(status == 0)
        #expect(json["format"] == .string("jws"))
        #expect(json["kind"] == .string("transaction"))
        #expect(json["payload"]?["transactionId"] == .string("2000000847061981"))
    }

    @Test("signed renewal info is format jws, kind renewal_info; a bundle id cannot be checked on it")
    func renewalInfo() throws {
        let path = "\(Self.jwsVectors)/go-iap/signed-renewal-info.jws"
        let (status, json) = try verify(path, ["--trust", root(Self.appleG3)])
        #expect(status == 0)
        #expect(json["kind"] == .string("renewal_info"))
        let (refused, error) = try verify(path, ["--trust", root(Self.appleG3), "--bundle-id", "com.example"])
        #expect(refused == 1)
        #expect(error["error"]?["code"] == .string("wrong_bundle_id"))
    }

    @Test("a notification body verifies as format server_notification")
    func notification() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/aporat/test-notification-signed-payload.json", ["--trust", root(Self.appleG3)])
        #expect(status == 0)
        #expect(json["format"] == .string("server_notification"))
        #expect(json["notification"]?["notificationType"] == .string("TEST"))
    }

    @Test("StoreKit 2 data under the wrong root is untrusted; an app receipt under G3 is too")
    func wrongRoots() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/mingos-assa/sandbox-transaction.jws", ["--trust", root(CLITests.appleRoot)])
        #expect(status == 1)
        #expect(json["error"]?["code"] == .string("untrusted_chain"))
        let (receiptStatus, receipt) = try verify(CLITests.realReceipt, ["--trust", root(Self.appleG3)])
        #expect(receiptStatus == 1)
        #expect(receipt["format"] == .string("app_receipt"))
    }

    @Test("device and app version checks exist only for app receipts and are refused on other formats")
    func uncheckableOptions() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/mingos-assa/sandbox-transaction.jws",
            ["--trust", root(Self.appleG3), "--device-id", "6c:40:08:b5:94:5e"])
        #expect(status == 1)
        #expect(json["error"]?["code"] == .string("uncheckable_option"))
    }

    @Test("inspect reports the format and what each format claims, without a trust decision")
    func inspect() throws {
        let runner = try CLIRunner()
        for (path, format) in [
            (CLITests.realReceipt, "app_receipt"), ("\(Self.jwsVectors)/go-iap/signed-renewal-info.jws", "jws"),
            ("\(Self.jwsVectors)/aporat/test-notification-signed-payload.json", "server_notification"),
            ("Tests/ReceiptVerifierTests/Vectors/real/cargobay/legacy-nonconsumable.b64", "legacy_transaction_receipt"),
        ] {
            let result = try runner.run(["inspect", root(path), "--json"])
            #expect(result.status == 0, "\(path)")
            let json = try JSONValue(parsing: result.standardOutput)
            #expect(json["format"] == .string(format))
            #expect(json["trust_decision"] == .string("none"))
        }
    }
}
