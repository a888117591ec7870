import ReceiptCrypto
import ReceiptModel
import ReceiptVerifier

/// The short text summaries printed without `--json`.
enum HumanReadable {
    static func summary(of verified: VerifiedReceipt) -> String {
        let receipt = verified.receipt
        var lines = [
            "valid: \(receipt.bundleID) \(receipt.applicationVersion ?? "(no version)")"
                + (receipt.receiptType.map { " [\($0)]" } ?? "") + ", created \(receipt.creationDate)",
            "signed by: \(verified.chain.first?.commonName ?? "?")",
            "trusted through: \(verified.chain.dropFirst().map(\.commonName).joined(separator: " → ")) "
                + "(checked at \(verified.validationTime))",
            "in-app purchases: \(receipt.inAppPurchases.count)",
        ]
        lines += receipt.inAppPurchases.map(purchaseLine)
        return lines.joined(separator: "\n") + "\n"
    }

    static func purchaseLine(_ purchase: InAppPurchase) -> String {
        var parts = [
            "  \(purchase.productID)", "transaction \(purchase.transactionID)", "purchased \(purchase.purchaseDate)",
        ]
        if let quantity = purchase.quantity, quantity != 1 { parts.append("quantity \(quantity)") }
        if let expires = purchase.expiresDate { parts.append("expires \(expires)") }
        if let cancelled = purchase.cancellationDate { parts.append("REFUNDED \(cancelled)") }
        return parts.joined(separator: "  ")
    }

    static func certificateLines(_ certificate: Certificate, index: Int, role: String) -> [String] {
        let key = (try? certificate.publicKey.algorithm.description) ?? "unknown key"
        return [
            "  [\(index)] \(role): \(certificate.subject)",
            "      issuer: \(certificate.issuer)",
            "      valid: \(ReceiptDate(secondsSince1970: certificate.notBefore)) … \(ReceiptDate(secondsSince1970: certificate.notAfter))",
            "      key: \(key), CA: \(certificate.isCertificateAuthority ? "yes" : "no"), serial: \(certificate.serialNumberHex)",
            "      sha256: \(certificate.sha256Fingerprint)",
        ]
    }
}
