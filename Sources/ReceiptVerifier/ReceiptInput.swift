import ReceiptDER

/// Turns what a caller hands over (a file's bytes, a request body) into the DER bytes of a receipt.
enum ReceiptInput {
    /// DER is recognised by its first byte (a SEQUENCE, 0x30); anything else must be strict base64 text
    /// (whitespace as ``Base64/decode(_:)`` allows). iOS 6 transaction receipts, raw or base64, are recognised and
    /// rejected with their own code.
    static func derBytes(from input: [UInt8], limits: VerificationLimits) throws(ReceiptVerificationError) -> [UInt8] {
        guard input.count <= limits.maximumInputSize else {
            throw ReceiptVerificationError(
                .tooLarge, "input is \(input.count) bytes; the limit is \(limits.maximumInputSize) bytes")
        }
        guard let first = input.first else { throw ReceiptVerificationError(.malformed, "input is empty") }
        if first == 0x30 { return input }
        try rejectLegacyTransactionReceipt(input)
        let decoded: [UInt8]
        do {
            decoded = try Base64.decode(input)
        } catch {
            throw ReceiptVerificationError(
                .malformed, "input is neither DER (which starts with byte 0x30) nor base64: \(error)")
        }
        try rejectLegacyTransactionReceipt(decoded)
        guard decoded.first == 0x30 else {
            throw ReceiptVerificationError(.malformed, "base64 input does not decode to DER (a SEQUENCE, byte 0x30)")
        }
        return decoded
    }

    /// iOS 6 receipts are NeXTSTEP property lists: `{ "signature" = "…"; "purchase-info" = "…"; … }`.
    private static func rejectLegacyTransactionReceipt(_ bytes: [UInt8]) throws(ReceiptVerificationError) {
        let start = bytes.prefix(64).drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        guard start.first == UInt8(ascii: "{") else { return }
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        guard text.contains("\"purchase-info\"") || text.contains("\"signature\"") else { return }
        throw ReceiptVerificationError(
            .legacyTransactionReceipt,
            "this is an iOS 6 transaction receipt (SKPaymentTransaction.transactionReceipt, an ASCII property list "
                + "with \"signature\" and \"purchase-info\"), not a PKCS#7 app receipt")
    }
}
