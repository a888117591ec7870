import Entitlements
import PurchaseVerifier
import ReceiptCrypto
import ReceiptModel
import ReceiptService
import ReceiptVerifier
import StrictJSON

/// `receipt entitlements`: what the buyer has unlocked now, from verified receipts and the app's catalog.
enum EntitlementsCommand {
    static let help = """
        Usage: receipt entitlements RECEIPT [RECEIPT…] --trust ANCHOR --catalog CATALOG.json [options]

        Verifies every proof (app receipts, StoreKit 2 signed transactions, server notifications carrying a
        transaction, iOS 6 transaction receipts: any mix, as for 'receipt verify'), merges their transactions
        (each transaction id counts once) and says which entitlements are active, in grace, expired or revoked
        at one instant, and the consumable balances. If any proof fails verification nothing is evaluated: the
        command fails naming the file and the code.

        Options:
          --trust FILE        A trust anchor (PEM or DER; repeatable, at least one).
          --intermediate FILE An issuer iOS 6 receipts do not carry (repeatable).
          --catalog FILE      The product catalog (JSON; see the README).
          --now RFC3339       Evaluate at this instant instead of the current time.
          --bundle-id ID      Require every receipt to be for this app.
          --json              Print one JSON object.
        """

    /// The options the command accepts.
    static let options = OptionSpec(
        valued: ["--trust", "--intermediate", "--catalog", "--now", "--bundle-id"], flags: ["--json"],
        maximumPositionals: .max)

    static func run(_ arguments: [String]) throws(CommandFailure) {
        let parsed = try Arguments(arguments, spec: options)
        guard !parsed.positionals.isEmpty else { throw .usage("at least one RECEIPT file is required") }
        guard let catalogPath = try parsed.single("--catalog") else { throw .usage("--catalog is required") }
        // As `receipt verify` does; `entitlements` makes no keys and no TLS connections either.
        OpenSSLStart.readCertificateKeysDirectly()
        var now = ReceiptService.systemTime()
        if let text = try parsed.single("--now") {
            guard let date = ReceiptDate(rfc3339: text) else {
                throw .usage("--now \"\(text)\" is not an RFC 3339 time (e.g. 2024-06-15T12:00:00Z)")
            }
            now = date
        }
        let verifier: PurchaseVerifier
        do {
            verifier = try PurchaseVerifier(
                trustAnchors: try Anchors.load(parsed.all("--trust")),
                intermediates: try Anchors.certificates(parsed.all("--intermediate"), option: "--intermediate"))
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .rejected("\(error)")
        }
        let catalog: Catalog
        do {
            catalog = try Catalog(json: Files.read(catalogPath))
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .rejected("catalog \(catalogPath): \(error)")
        }
        let options = VerificationOptions(bundleID: try parsed.single("--bundle-id"))
        let json = parsed.flag("--json")

        var verified: [VerifiedPurchaseProof] = []
        var failures: [(file: String, error: PurchaseProofError)] = []
        for path in parsed.positionals {
            let input = try Files.read(path, limit: verifier.receipts.limits.maximumInputSize)
            do {
                verified.append(try verifier.verify(input, options: options))
            } catch {
                failures.append((path, error))
            }
        }
        guard failures.isEmpty else {
            if json {
                let errors: [JSONValue] = failures.map { failure in
                    .object(
                        JSONObject([
                            "file": .string(failure.file), "code": .string(failure.error.code),
                            "message": .string(failure.error.message),
                        ]))
                }
                let output = JSONObject(["now": .string(now.rfc3339), "errors": .array(errors)])
                var line = JSONValue.object(output).serializedBytes()
                line.append(UInt8(ascii: "\n"))
                Files.writeStandardOutput(line)
            }
            let lines = failures.map { "\($0.file): invalid: \($0.error)" }
            throw .rejected(
                "no entitlements evaluated, a receipt failed verification:\n" + lines.joined(separator: "\n"))
        }
        let report: EntitlementReport
        do {
            report = try EntitlementEngine(catalog: catalog).evaluate(verified, at: now)
        } catch {
            throw .rejected("\(error)")
        }
        if json {
            var line = JSONValue.object(report.json).serializedBytes()
            line.append(UInt8(ascii: "\n"))
            Files.writeStandardOutput(line)
        } else {
            Files.writeStandardOutput(Array(table(report).utf8))
        }
    }

    /// A readable table: entitlement, state, until when, from which product.
    static func table(_ report: EntitlementReport) -> String {
        var rows = [["ENTITLEMENT", "STATE", "UNTIL", "PRODUCT"]]
        for name in report.entitlements.keys.sorted() {
            guard let entitlement = report.entitlements[name] else { continue }
            let until: String =
                switch entitlement.state {
                case .active: entitlement.expiresDate?.rfc3339 ?? "forever"
                case .grace:
                    "\(entitlement.graceExpiresDate?.rfc3339 ?? "?") (grace; expired \(entitlement.expiresDate?.rfc3339 ?? "?"))"
                case .expired: "expired \(entitlement.expiresDate?.rfc3339 ?? "?")"
                case .revoked: "refunded"
                }
            rows.append([name, entitlement.state.rawValue, until, entitlement.productID])
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = ["entitlements at \(report.now.rfc3339)"]
        if report.entitlements.isEmpty {
            lines.append("  (none)")
        } else {
            lines += rows.map { row in
                PlainText.trimmingSpaces(
                    zip(row, widths).map { cell, width in PlainText.cell(cell, width: width) }.joined(separator: "  "))
            }
        }
        if !report.balances.isEmpty {
            lines.append(
                "balances: "
                    + report.balances.keys.sorted().map { "\($0) \(report.balance($0))" }.joined(separator: ", "))
        }
        if !report.unknownProducts.isEmpty {
            lines.append("unknown products (not in the catalog): " + report.unknownProducts.joined(separator: ", "))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
