import PurchaseVerifier
import ReceiptJWS
import StrictJSON

/// How `receipt verify` shows a verified proof, or why one failed, in each format.
enum ProofOutput {
    /// One result as a JSON object: `{"valid", "status", "format", …}` with `receipt` (app and iOS 6 receipts, in
    /// verifyReceipt's shape), `kind` and `payload` (StoreKit 2 data, as Apple signed it), `notification` with
    /// its decoded `transaction` and `renewal_info`, or `error`.
    static func json(_ result: Result<VerifiedPurchaseProof, PurchaseProofError>, format: PurchaseProofFormat)
        -> JSONObject
    {
        JSONObject { add(result, format: format, to: &$0) }
    }

    /// Adds the members of ``json(_:format:)`` to `object`, in the same order.
    static func add<Object: JSONObjectBuilder>(
        _ result: Result<VerifiedPurchaseProof, PurchaseProofError>, format: PurchaseProofFormat,
        to object: inout Object
    ) {
        switch result {
        case .success(let proof):
            object.add(Keys.valid, .bool(true))
            object.add(Keys.status, integer: 0)
            object.add(Keys.format, string: proof.format.rawValue)
            switch proof {
            case .appReceipt(let verified):
                object.addObject(Keys.receipt) { verified.receipt.addVerifyReceiptJSON(to: &$0, pacificTime: nil) }
            case .legacyTransactionReceipt(let verified): object.add(Keys.receipt, .object(verified.verifyReceiptJSON))
            case .signedTransaction(_, let jws): signedData(.transaction, jws, to: &object)
            case .signedRenewalInfo(_, let jws): signedData(.renewalInfo, jws, to: &object)
            case .signedAppTransaction(_, let jws): signedData(.appTransaction, jws, to: &object)
            case .otherSignedData(let jws): signedData(.other, jws, to: &object)
            case .serverNotification(let notification):
                object.add("notification", .object(notification.signedPayload.payload))
                object.add("transaction", notification.signedTransactionInfo.map { .object($0.payload) })
                object.add("renewal_info", notification.signedRenewalInfo.map { .object($0.payload) })
            }
        case .failure(let error):
            object.add(Keys.valid, .bool(false))
            object.add(Keys.status, integer: Int64(error.status))
            object.add(Keys.format, string: format.rawValue)
            object.addObject("error") { details in
                details.add("code", string: error.code)
                details.add("message", string: error.message)
            }
        }
    }

    /// The keys every result has, made once: a batch writes them on every line.
    private enum Keys {
        static let valid = JSONKey("valid")
        static let status = JSONKey("status")
        static let format = JSONKey("format")
        static let receipt = JSONKey("receipt")
    }

    /// Why a proof failed, in one line: `invalid FORMAT: code: message`, or what the input is when it is none.
    static func failure(_ error: PurchaseProofError, format: PurchaseProofFormat) -> String {
        format == .unrecognized ? "\(error)" : "invalid \(format.rawValue): \(error)"
    }

    private static func signedData<Object: JSONObjectBuilder>(
        _ kind: SignedDataKind, _ jws: VerifiedJWS, to object: inout Object
    ) {
        object.add("kind", string: kind.rawValue)
        object.add("payload", .object(jws.payload))
    }

    /// The readable summary of a verified proof.
    static func summary(of proof: VerifiedPurchaseProof) -> String {
        switch proof {
        case .appReceipt(let verified): return HumanReadable.summary(of: verified)
        case .legacyTransactionReceipt(let verified):
            let info = verified.purchaseInfo
            return lines(
                [
                    "valid: iOS 6 transaction receipt \(info.bundleID ?? "?") \(info.bundleVersion ?? "")",
                    "  \(info.productID ?? "?")  transaction \(info.transactionID ?? "?")  purchased "
                        + (info.purchaseDate?.rfc3339 ?? "?"),
                ] + chainLines(verified.chain.map(\.commonName), at: verified.validationTime.rfc3339))
        case .signedTransaction(let transaction, let jws):
            return lines(
                [
                    "valid: StoreKit 2 signed transaction \(transaction.bundleID ?? "?") [\(transaction.environment ?? "?")]",
                    "  \(transaction.productID ?? "?")  transaction \(transaction.transactionID ?? "?")  purchased "
                        + (transaction.purchaseDate?.rfc3339 ?? "?")
                        + (transaction.expiresDate.map { "  expires \($0.rfc3339)" } ?? "")
                        + (transaction.revocationDate.map { "  revoked \($0.rfc3339)" } ?? ""),
                ] + chainLines(jws.chain.map(\.commonName), at: jws.validationTime.rfc3339))
        case .signedRenewalInfo(let info, let jws):
            return lines(
                [
                    "valid: StoreKit 2 renewal info [\(info.environment ?? "?")]",
                    "  \(info.productID ?? "?")  original transaction \(info.originalTransactionID ?? "?")  "
                        + "renews to \(info.autoRenewProductID ?? "?")",
                ] + chainLines(jws.chain.map(\.commonName), at: jws.validationTime.rfc3339))
        case .otherSignedData(let jws):
            return lines(
                ["valid: StoreKit 2 signed data (\(jws.payload.keys.joined(separator: ", ")))"]
                    + chainLines(jws.chain.map(\.commonName), at: jws.validationTime.rfc3339))
        case .signedAppTransaction(let app, let jws):
            return lines(
                ["valid: StoreKit 2 app transaction \(app.bundleID ?? "?") \(app.applicationVersion ?? "")"]
                    + chainLines(jws.chain.map(\.commonName), at: jws.validationTime.rfc3339))
        case .serverNotification(let notification):
            var text = [
                "valid: App Store Server Notification \(notification.notificationType ?? "?")"
                    + (notification.subtype.map { "/\($0)" } ?? "")
            ]
            if let transaction = notification.transaction {
                text.append(
                    "  transaction \(transaction.transactionID ?? "?")  \(transaction.productID ?? "?")")
            }
            return lines(
                text
                    + chainLines(
                        notification.signedPayload.chain.map(\.commonName),
                        at: notification.signedPayload.validationTime.rfc3339))
        }
    }

    private static func chainLines(_ names: [String], at time: String) -> [String] {
        ["trusted through: \(names.joined(separator: " → ")) (checked at \(time))"]
    }

    private static func lines(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }
}
