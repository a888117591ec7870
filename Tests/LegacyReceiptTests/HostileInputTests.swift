import LegacyReceipt
import PropertyList
import ReceiptDER
import Testing

/// The error parsing `text` (a property list) as a receipt gives.
func parseError(_ text: String, maximumSize: Int = LegacyTransactionReceipt.defaultMaximumSize) -> LegacyReceiptError? {
    legacyError {
        try LegacyTransactionReceipt(parsing: Array(text.utf8), maximumSize: maximumSize)
    }
}

/// A receipt property list with these values, base64-encoded where a receipt encodes them.
func receiptText(signature: [UInt8]? = nil, purchaseInfo: String = "{ \"transaction-id\" = \"1\"; }") -> String {
    var text = "{ \"purchase-info\" = \"\(Base64.encode(Array(purchaseInfo.utf8)))\";"
    if let signature { text += " \"signature\" = \"\(Base64.encode(signature))\";" }
    return text + " }"
}

@Suite("Hostile and malformed receipts")
struct HostileInputTests {
    static let header: [UInt8] = [2] + [UInt8](repeating: 0xAB, count: 128)

    @Test("a signature blob claiming a 4 GiB certificate is malformed")
    func hugeCertificateLength() {
        let error = parseError(receiptText(signature: Self.header + [0xFF, 0xFF, 0xFF, 0xFF, 0x30, 0x00]))
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("4294967295-byte certificate but 2 bytes follow") == true)
    }

    @Test("a signature blob cut short inside the RSA signature is malformed")
    func truncatedBlob() {
        let error = parseError(receiptText(signature: Array(Self.header.prefix(50))))
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("signature is 50 bytes") == true)
    }

    @Test("a signature blob with bytes after the certificate is malformed")
    func trailingBytes() {
        let error = parseError(receiptText(signature: Self.header + [0, 0, 0, 2, 0x30, 0x00, 0xFF]))
        #expect(error?.code == .malformed)
    }

    @Test("a signature blob with an empty certificate is malformed")
    func emptyCertificate() {
        #expect(parseError(receiptText(signature: Self.header + [0, 0, 0, 0]))?.code == .malformed)
    }

    @Test("an empty signature is malformed")
    func emptySignature() {
        #expect(parseError(receiptText(signature: []))?.code == .malformed)
    }

    @Test("signature versions other than 2 and 3 are unsupported", arguments: [0, 1, 4, 255] as [UInt8])
    func unsupportedVersion(_ version: UInt8) {
        let error = parseError(receiptText(signature: [version] + Array(Self.header.dropFirst()) + [0, 0, 0, 1, 0]))
        #expect(error?.code == .unsupportedVersion)
    }

    @Test("a leaf that is not a certificate is refused as an invalid certificate")
    func undecodableLeaf() throws {
        let input = try TestChain.rsa.get().receipt(certificate: [0x30, 0x03, 0x02, 0x01, 0x00])
        let error = legacyError { try TestChain.rsa.get().verifier().verify(input) }
        #expect(error?.code == .invalidCertificate)
    }

    @Test("10 000 nested dictionaries are refused as too large before they are read")
    func deepNesting() {
        let error = parseError(String(repeating: "{a=", count: 10_000))
        #expect(error?.code == .tooLarge)
        #expect(error?.syntaxError?.rule == .nestingTooDeep(limit: 4))
    }

    @Test("purchase info nested 10 000 deep is refused as too large")
    func deepPurchaseInfo() {
        let error = parseError(receiptText(purchaseInfo: String(repeating: "(", count: 10_000)))
        #expect(error?.code == .tooLarge)
    }

    @Test("a 2 MB input is refused against the default 1 MiB limit")
    func oversizedInput() {
        let input = [UInt8](repeating: UInt8(ascii: "A"), count: 2_000_000)
        let error = legacyError { try LegacyTransactionReceipt(parsing: input) }
        #expect(error?.code == .tooLarge)
    }

    @Test("the verifier applies its own size limit")
    func verifierSizeLimit() throws {
        let verifier = try LegacyReceiptVerifier(
            trustAnchors: [Vectors.apple(Vectors.appleRoot)], intermediates: [], maximumSize: 100)
        let input = try LegacyVector.named("cargobay/legacy-nonconsumable.b64").bytes()
        #expect(legacyError { try verifier.verify(input) }?.code == .tooLarge)
    }

    @Test("text that is neither base64 nor a property list is malformed")
    func notBase64() {
        let error = legacyError {
            try LegacyTransactionReceipt(parsing: Array("not a receipt!".utf8))
        }
        #expect(error?.code == .malformed)
    }

    @Test("a PKCS#7 app receipt is not a legacy receipt")
    func appReceipt() {
        let error = legacyError {
            try LegacyTransactionReceipt(parsing: Array(Base64.encode([0x30, 0x80, 0x06, 0x09]).utf8))
        }
        #expect(error?.code == .malformed)
    }

    @Test("a receipt that is not a dictionary is malformed")
    func notADictionary() {
        #expect(parseError("( a, b )")?.code == .malformed)
    }

    @Test("a duplicated top-level key is malformed, with the syntax error's offset")
    func duplicateKey() {
        let error = parseError("{ pod = 1; pod = 2; }")
        #expect(error?.code == .malformed)
        #expect(error?.syntaxError?.rule == .duplicateKey("pod"))
        #expect(error?.syntaxError?.offset == 11)
    }

    @Test("a top-level field that is not a string is an invalid field")
    func nonStringField() {
        let error = parseError("{ \"purchase-info\" = \"e30=\"; pod = ( 1 ); }")
        #expect(error?.code == .invalidField)
        #expect(error?.message.contains("\"pod\" is an array") == true)
    }

    @Test("a receipt without purchase-info is missing a field")
    func missingPurchaseInfo() {
        #expect(parseError("{ signature = \"AA==\"; }")?.code == .missingField)
    }

    @Test("purchase-info that is not strict base64 is malformed")
    func purchaseInfoNotBase64() {
        let error = parseError("{ \"purchase-info\" = \"e30\"; }")
        #expect(error?.code == .malformed)
        #expect(error?.message.hasPrefix("purchase-info is not strict base64") == true)
    }

    @Test(
        "purchase-info values that do not fit their documented type are invalid fields",
        arguments: [
            "\"purchase-date-ms\" = \"12:00\";", "\"quantity\" = \"0\";", "\"quantity\" = \"-1\";",
            "\"transaction-id\" = \"1e3\";", "\"is-trial-period\" = \"yes\";",
            "\"item-id\" = \"99999999999999999999\";",
            "\"purchase-date\" = \"yesterday\";", "\"expires-date\" = \"soon\";", "\"bid\" = \"\";",
            "\"nested\" = { a = b; };", "\"a-b\" = \"1\"; \"a_b\" = \"2\";",
        ])
    func invalidPurchaseInfoField(_ entry: String) {
        let error = parseError(receiptText(purchaseInfo: "{ " + entry + " }"))
        #expect(error?.code == .invalidField)
    }

    @Test("purchase-date in verifyReceipt's text form is read when there is no purchase-date-ms")
    func textPurchaseDate() throws {
        let text = receiptText(purchaseInfo: "{ \"purchase-date\" = \"2012-12-02 07:15:54 Etc/GMT\"; }")
        let receipt = try LegacyTransactionReceipt(parsing: Array(text.utf8))
        #expect(receipt.purchaseInfo.purchaseDate?.secondsSince1970 == 1_354_432_554)
    }
}
