import Foundation
import Testing

@Suite("receipt entitlements, run as a process")
struct EntitlementsCLITests {
    static let catalog = """
        {"products": [
          {"id": "com.example.removeads", "type": "non_consumable", "entitlements": ["no_ads"]},
          {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"],
           "group": "main", "rank": 2},
          {"id": "com.example.coins100", "type": "consumable", "entitlements": ["coins"], "amount": 100}
        ],
         "grace_period": "P16D"}
        """

    /// A lifetime unlock and one month of pro.
    static let first = """
        {"bundle_id": "com.example.game", "receipt_creation_date": "2024-06-01T00:00:00Z", "in_app": [
          {"product_id": "com.example.removeads", "transaction_id": "1000", "original_transaction_id": "1000",
           "purchase_date": "2024-01-10T09:30:00Z"},
          {"product_id": "com.example.pro.monthly", "transaction_id": "2001", "original_transaction_id": "2000",
           "purchase_date": "2024-06-01T00:00:00Z", "expires_date": "2024-07-01T00:00:00Z"}
        ]}
        """

    /// A later receipt: the same month of pro again, coins, and a product the catalog does not know.
    static let second = """
        {"bundle_id": "com.example.game", "receipt_creation_date": "2024-06-05T00:00:00Z", "in_app": [
          {"product_id": "com.example.pro.monthly", "transaction_id": "2001", "original_transaction_id": "2000",
           "purchase_date": "2024-06-01T00:00:00Z", "expires_date": "2024-07-01T00:00:00Z"},
          {"product_id": "com.example.coins100", "transaction_id": "3000", "purchase_date": "2024-06-04T18:30:00Z",
           "quantity": 3},
          {"product_id": "com.example.legacy", "transaction_id": "4000", "purchase_date": "2024-02-01T00:00:00Z"}
        ]}
        """

    /// A dev chain, the catalog, and `first.der` and `second.der` signed by the chain.
    static func setUp() throws -> CLIRunner {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", "ec"]).status == 0)
        try runner.write("catalog.json", catalog)
        try sign(runner, "first", first)
        try sign(runner, "second", second)
        return runner
    }

    /// Signs the request `text` into `NAME.der` with the chain in `chain/`.
    static func sign(_ runner: CLIRunner, _ name: String, _ text: String, chain: String = "dev") throws {
        try runner.write("\(name).json", text)
        let signed = try runner.run([
            "sign", "--key", "\(chain)/receipt-signer.key", "--cert", "\(chain)/receipt-signer.pem", "--chain",
            "\(chain)/intermediate-ca.pem", "\(name).json", "-o", "\(name).der",
        ])
        #expect(signed.status == 0, "\(signed.standardError)")
    }

    static let base = [
        "entitlements", "first.der", "second.der", "--trust", "dev/root-ca.pem", "--catalog", "catalog.json",
    ]

    @Test("--json prints the report: duplicated transactions counted once, unknown products listed")
    func json() throws {
        let runner = try Self.setUp()
        let result = try runner.run(Self.base + ["--now", "2024-06-15T12:00:00Z", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.output
                == #"{"now":"2024-06-15T12:00:00Z","entitlements":{"#
                + #""no_ads":{"state":"active","product_id":"com.example.removeads","transaction_id":"1000","#
                + #""original_transaction_id":"1000","purchase_date":"2024-01-10T09:30:00Z","expires_date":null},"#
                + #""pro":{"state":"active","product_id":"com.example.pro.monthly","transaction_id":"2001","#
                + #""original_transaction_id":"2000","purchase_date":"2024-06-01T00:00:00Z","#
                + #""expires_date":"2024-07-01T00:00:00Z"}},"#
                + #""balances":{"coins":300},"unknown_products":["com.example.legacy"]}"# + "\n")
    }

    @Test("without --json a table: entitlement, state, until when, from which product; then balances and unknowns")
    func table() throws {
        let runner = try Self.setUp()
        let result = try runner.run(Self.base + ["--now", "2024-07-05T00:00:00Z"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.output == """
                entitlements at 2024-07-05T00:00:00Z
                ENTITLEMENT  STATE   UNTIL                                                       PRODUCT
                no_ads       active  forever                                                     com.example.removeads
                pro          grace   2024-07-17T00:00:00Z (grace; expired 2024-07-01T00:00:00Z)  com.example.pro.monthly
                balances: coins 300
                unknown products (not in the catalog): com.example.legacy

                """)
    }

    @Test("--now defaults to the current time")
    func nowDefault() throws {
        let runner = try Self.setUp()
        let result = try runner.run(Self.base + ["--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput)) as? [String: Any])
        let text = try #require(object["now"] as? String)
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        let now = try #require(plain.date(from: text) ?? fractional.date(from: text), "\(text)")
        #expect(abs(now.timeIntervalSinceNow) < 300)
        #expect(object["entitlements"] != nil)
    }

    @Test("a receipt that fails verification fails the command, naming the file and the code; nothing is evaluated")
    func invalidReceiptInTheSet() throws {
        let runner = try Self.setUp()
        #expect(try runner.run(["certs", "create", "other", "--algorithm", "ec"]).status == 0)
        try Self.sign(runner, "forged", Self.second, chain: "other")
        let arguments = [
            "entitlements", "first.der", "forged.der", "second.der", "--trust", "dev/root-ca.pem", "--catalog",
            "catalog.json", "--now", "2024-06-15T12:00:00Z",
        ]
        let plain = try runner.run(arguments)
        #expect(plain.status == 1)
        #expect(plain.output.isEmpty)
        #expect(plain.standardError.contains("forged.der"))
        #expect(plain.standardError.contains("untrusted_chain"))
        #expect(!plain.standardError.contains("first.der"))

        let json = try runner.run(arguments + ["--json"])
        #expect(json.status == 1)
        #expect(
            json.output.hasPrefix(
                #"{"now":"2024-06-15T12:00:00Z","errors":[{"file":"forged.der","code":"untrusted_chain","#))
        #expect(!json.output.contains("entitlements"))
        #expect(!json.output.contains("balances"))
    }

    @Test("a file that is not a receipt at all is named with its code too")
    func notAReceipt() throws {
        let runner = try Self.setUp()
        try runner.write("garbage.der", "not a receipt")
        let result = try runner.run(Self.base + ["garbage.der", "--now", "2024-06-15T12:00:00Z", "--json"])
        #expect(result.status == 1)
        #expect(result.output.contains(#""file":"garbage.der","code":"malformed""#))
        #expect(result.standardError.contains("garbage.der"))
    }

    @Test("--catalog is required: a usage error")
    func missingCatalog() throws {
        let runner = try Self.setUp()
        let result = try runner.run(["entitlements", "first.der", "--trust", "dev/root-ca.pem"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("--catalog is required"))
        #expect(result.output.isEmpty)
    }

    @Test("a bad catalog is refused, naming the key path and the rule")
    func badCatalog() throws {
        let runner = try Self.setUp()
        try runner.write(
            "bad.json", #"{"products": [{"id": "a", "type": "subscription", "entitlements": ["x"]}]}"#)
        let result = try runner.run([
            "entitlements", "first.der", "--trust", "dev/root-ca.pem", "--catalog", "bad.json",
        ])
        #expect(result.status == 1)
        #expect(result.standardError.contains("bad.json"))
        #expect(result.standardError.contains(#"products[0].type: unknown type "subscription""#))
        #expect(result.output.isEmpty)
    }

    @Test("--bundle-id refuses receipts for another app")
    func bundleIDMismatch() throws {
        let runner = try Self.setUp()
        let result = try runner.run(Self.base + ["--bundle-id", "com.example.other", "--now", "2024-06-15T12:00:00Z"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("first.der"))
        #expect(result.standardError.contains("wrong_bundle_id"))
        #expect(result.output.isEmpty)
        let matching = try runner.run(Self.base + ["--bundle-id", "com.example.game", "--now", "2024-06-15T12:00:00Z"])
        #expect(matching.status == 0)
    }

    @Test("receipts for different apps are refused together")
    func mixedBundleIDs() throws {
        let runner = try Self.setUp()
        try Self.sign(
            runner, "other", Self.second.replacingOccurrences(of: "com.example.game", with: "com.example.other"))
        let result = try runner.run([
            "entitlements", "first.der", "other.der", "--trust", "dev/root-ca.pem", "--catalog", "catalog.json",
        ])
        #expect(result.status == 1)
        #expect(result.standardError.contains("mixed_bundle_ids"))
    }

    @Test("a --now that is not RFC 3339 is a usage error")
    func badNow() throws {
        let runner = try Self.setUp()
        let result = try runner.run(Self.base + ["--now", "tomorrow"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("tomorrow"))
    }

    @Test("--help describes the command")
    func help() throws {
        let result = try CLIRunner().run(["entitlements", "--help"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("Usage: receipt entitlements"))
    }
}
