import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptVerifier
import StrictJSON
import Testing

@Suite("Input forms and limits")
struct InputTests {
    @Test("base64 with line breaks and spaces is read like DER")
    func wrappedBase64() throws {
        let der = try TestFixtures.signed()
        let text = Base64.encode(der)
        var wrapped = ""
        for (index, character) in text.enumerated() {
            if index > 0 && index % 64 == 0 { wrapped += index % 128 == 0 ? "\r\n" : " \n" }
            wrapped.append(character)
        }
        let verifier = try TestFixtures.verifier()
        #expect(try verifier.verify(Array((wrapped + "\n").utf8)).receipt == verifier.verify(der).receipt)
    }

    @Test("base64 with characters outside the alphabet is malformed", arguments: ["\t", "-", "_", "\r", "é"])
    func badBase64(_ insertion: String) throws {
        var text = Base64.encode(try TestFixtures.signed())
        text.insert(contentsOf: insertion, at: text.index(text.startIndex, offsetBy: 40))
        #expect(TestFixtures.code(Array(text.utf8), try TestFixtures.verifier()) == .malformed)
    }

    @Test("truncated base64 is malformed")
    func truncatedBase64() throws {
        let text = Base64.encode(try TestFixtures.signed())
        #expect(TestFixtures.code(Array(text.utf8.dropLast(3)), try TestFixtures.verifier()) == .malformed)
    }

    @Test("an empty input is malformed")
    func emptyInput() throws {
        #expect(TestFixtures.code([], try TestFixtures.verifier()) == .malformed)
    }

    @Test("a file that is not a receipt is malformed")
    func notAReceipt() throws {
        #expect(
            TestFixtures.code(try Vectors.bytes("real/appreceiptvalidator/not_a_receipt"), try TestFixtures.verifier())
                == .malformed)
    }

    @Test("iOS 6 transaction receipts are recognised and refused as such", arguments: InputTests.legacyReceipts)
    func legacyTransactionReceipt(_ path: String) throws {
        let input = try Vectors.bytes("real/" + path)
        let verifier = try TestFixtures.verifier()
        let error = TestFixtures.failure { () throws(ReceiptVerificationError) in _ = try verifier.verify(input) }
        #expect(error?.code == .legacyTransactionReceipt)
        #expect(error?.message.contains("iOS 6 transaction receipt") == true)
        #expect(error?.status == 21002)
    }

    static let legacyReceipts: [String] = {
        guard case .array(let paths)? = RealReceipt.manifest["legacy_transaction_receipts"] else { return [] }
        return paths.compactMap(\.stringValue)
    }()

    @Test("every legacy receipt in the collection is tested")
    func legacyCount() {
        #expect(Self.legacyReceipts.count == 8)
    }

    @Test("an input over the size limit is refused before it is parsed")
    func sizeLimit() throws {
        let der = try TestFixtures.signed()
        let verifier = try ReceiptVerifier(
            trustAnchors: [TestFixtures.chain(.rsa2048).root],
            limits: VerificationLimits(maximumInputSize: der.count - 1))
        #expect(TestFixtures.code(der, verifier) == .tooLarge)
        let exact = try ReceiptVerifier(
            trustAnchors: [TestFixtures.chain(.rsa2048).root], limits: VerificationLimits(maximumInputSize: der.count))
        #expect(TestFixtures.code(der, exact) == nil)
    }

    @Test("every truncation of a receipt is refused with an error", arguments: GeneratedKeyAlgorithm.allCases)
    func truncation(_ algorithm: GeneratedKeyAlgorithm) throws {
        let der = try TestFixtures.signed(TestFixtures.receipt(), with: algorithm)
        let verifier = try TestFixtures.verifier(algorithm)
        for length in 0..<der.count {
            #expect(TestFixtures.code(Array(der.prefix(length)), verifier) != nil, "prefix of \(length) bytes")
        }
    }

    @Test("every truncation of a real BER receipt is refused with an error")
    func truncationOfBER() throws {
        let der = try Vectors.bytes("real/tpinappreceipt/receipt-xcode.der")
        let verifier = try ReceiptVerifier(trustAnchors: [
            Vectors.certificate("real/tpinappreceipt/StoreKitTestCertificate.cer")
        ])
        #expect(TestFixtures.code(der, verifier) == nil)
        for length in 0..<der.count {
            #expect(TestFixtures.code(Array(der.prefix(length)), verifier) != nil, "prefix of \(length) bytes")
        }
    }

    @Test("deep nesting is refused within the depth limit")
    func deepNesting() throws {
        let depth = 100_000
        let nested =
            Array([[UInt8]](repeating: [0x30, 0x80], count: depth).joined())
            + [UInt8](repeating: 0x00, count: depth * 2)
        #expect(nested.count == depth * 4)
        let code = TestFixtures.code(nested, try TestFixtures.verifier())
        #expect(code == .tooLarge)
    }

    @Test("our receipt in BER form (indefinite lengths, chunked content) verifies like the DER form")
    func berEnvelope() throws {
        let der = try TestFixtures.signed()
        let ber = try BERRewriter.rewrite(der)
        #expect(ber != der)
        let verifier = try TestFixtures.verifier()
        #expect(try verifier.verify(ber).receipt == verifier.verify(der).receipt)
    }
}

/// Re-encodes DER as BER the way Xcode does: every constructed element outside the certificates gets an indefinite
/// length, and OCTET STRINGs become constructed strings of small chunks.
enum BERRewriter {
    static func rewrite(_ der: [UInt8]) throws -> [UInt8] {
        try rewrite(ASN1Node.parse(der, rules: .der), depth: 0)
    }

    private static func rewrite(_ node: ASN1Node, depth: Int) throws -> [UInt8] {
        let identifier = Array(node.encoded.prefix(1))
        if node.tag == .octetString {
            let chunks = stride(from: 0, to: node.content.count, by: 100).map { start -> [UInt8] in
                var writer = DERWriter()
                writer.appendOctetString(node.content.dropFirst(start).prefix(100))
                return writer.bytes
            }
            return [0x24, 0x80] + chunks.joined() + [0x00, 0x00]
        }
        // Certificates (the [0] set inside SignedData, at depth 3) stay DER, as in real receipts.
        guard node.tag.isConstructed, !(depth == 3 && node.tag == .contextSpecific(0, constructed: true)) else {
            return Array(node.encoded)
        }
        var children = try node.children()
        var content: [UInt8] = []
        while !children.isAtEnd { content += try rewrite(children.readNode(), depth: depth + 1) }
        return identifier + [0x80] + content + [0x00, 0x00]
    }
}
