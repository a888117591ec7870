import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptSigner
import StrictJSON
import Testing

/// Every change to a valid JWS, or to its shape, is refused with the code that names what broke.
@Suite("Tampering and malformed input")
struct TamperingTests {
    static let file = "apple-assl/mock_signed_data/transactionInfo.jws"

    static func verifier() throws -> JWSVerifier { try Vectors.verifier(Vectors.appleLibraryTestCA()) }
    static func original() throws -> String { try Vectors.text(file) }

    static func code(_ compact: String) throws -> JWSError.Code? {
        let verifier = try verifier()
        return try Vectors.code { try verifier.verify(compact) }
    }

    /// `compact` with one part's decoded bytes changed by `change`, re-encoded canonically.
    static func changing(_ compact: String, part index: Int, _ change: (inout [UInt8]) -> Void) throws -> String {
        var parts = Vectors.parts(compact)
        var bytes = try Base64URL.decode(Array(parts[index].utf8))
        change(&bytes)
        parts[index] = Base64URL.encode(bytes)
        return parts.joined(separator: ".")
    }

    @Test("the untouched fixture verifies (the baseline for every other test here)")
    func baseline() throws {
        #expect(try Self.code(Self.original()) == nil)
    }

    @Test("a flipped bit in the header is refused", arguments: [0, 10, 40, 200, 600])
    func flippedHeaderBit(_ offset: Int) throws {
        let tampered = try Self.changing(Self.original(), part: 0) { $0[offset] ^= 0x01 }
        #expect(try Self.code(tampered) != nil)
    }

    @Test("a changed payload byte breaks the signature")
    func flippedPayloadByte() throws {
        // "Sandbox" becomes "Sandbpx": still a JSON object, so only the signature can catch it.
        let tampered = try Self.changing(Self.original(), part: 1) { bytes in
            if let index = bytes.firstIndex(of: UInt8(ascii: "o")) { bytes[index] = UInt8(ascii: "p") }
        }
        #expect(try Self.code(tampered) == .invalidSignature)
    }

    @Test("a flipped bit in the signature is refused", arguments: [0, 31, 32, 63])
    func flippedSignatureBit(_ offset: Int) throws {
        let tampered = try Self.changing(Self.original(), part: 2) { $0[offset] ^= 0x80 }
        #expect(try Self.code(tampered) == .invalidSignature)
    }

    @Test("a payload moved from another JWS of the same signer breaks the signature")
    func swappedPayload() throws {
        let transaction = Vectors.parts(try Self.original())
        let notification = Vectors.parts(try Vectors.text("apple-assl/mock_signed_data/testNotification.jws"))
        #expect(transaction[0] == notification[0])
        let swapped = [transaction[0], notification[1], transaction[2]].joined(separator: ".")
        #expect(try Self.code(swapped) == .invalidSignature)
    }

    @Test("a signature moved from another JWS of the same signer is refused")
    func swappedSignature() throws {
        let transaction = Vectors.parts(try Self.original())
        let notification = Vectors.parts(try Vectors.text("apple-assl/mock_signed_data/testNotification.jws"))
        let swapped = [transaction[0], transaction[1], notification[2]].joined(separator: ".")
        #expect(try Self.code(swapped) == .invalidSignature)
    }

    @Test("algorithms other than ES256 are refused", arguments: ["none", "HS256", "RS256", "ES384", "es256", ""])
    func otherAlgorithm(_ algorithm: String) throws {
        let original = try Self.original()
        let tampered = Vectors.replacingHeader(original, with: try Vectors.header(of: original, algorithm: algorithm))
        #expect(try Self.code(tampered) == .unsupportedAlgorithm)
    }

    @Test("an unsecured JWS (alg none, empty signature) is refused")
    func unsecured() throws {
        let original = try Self.original()
        let header = Base64URL.encode(Array(try Vectors.header(of: original, algorithm: "none").utf8))
        #expect(try Self.code(header + "." + Vectors.parts(original)[1] + ".") == .malformed)
    }

    @Test("a header without alg is refused")
    func missingAlgorithm() throws {
        let original = try Self.original()
        var header = try Vectors.header(original)
        header["alg"] = nil
        #expect(
            try Self.code(Vectors.replacingHeader(original, with: JSONValue.object(header).serialized())) == .malformed)
    }

    @Test(
        "header parameters that change how a JWS is read are refused", arguments: ["crit", "jku", "jwk", "x5u", "b64"])
    func unsupportedParameter(_ name: String) throws {
        let original = try Self.original()
        var header = try Vectors.header(original)
        header[name] = .string("x")
        let tampered = Vectors.replacingHeader(original, with: JSONValue.object(header).serialized())
        #expect(try Self.code(tampered) == .unsupportedHeader)
    }

    @Test("a typ other than JWT is refused")
    func otherType() throws {
        let original = try Self.original()
        var header = try Vectors.header(original)
        header["typ"] = .string("JOSE+JSON")
        let tampered = Vectors.replacingHeader(original, with: JSONValue.object(header).serialized())
        #expect(try Self.code(tampered) == .unsupportedHeader)
    }

    @Test("a header with a duplicate key is refused")
    func duplicateHeaderKey() throws {
        let original = try Self.original()
        let header = JSONValue.object(try Vectors.header(original)).serialized()
        let duplicated = "{\"alg\":\"none\"," + header.dropFirst()
        #expect(try Self.code(Vectors.replacingHeader(original, with: duplicated)) == .malformed)
    }

    @Test("a payload with a duplicate key is refused")
    func duplicatePayloadKey() throws {
        let chain = try Fresh.chain.get()
        let signed = try Fresh.signer(chain).sign(
            payloadBytes: Array(#"{"signedDate":1717588800000,"bundleId":"a","bundleId":"b"}"#.utf8))
        let verifier = try Vectors.verifier(chain.root)
        #expect(try Vectors.code { try verifier.verify(signed) } == .invalidPayload)
    }

    @Test("a payload that is not a JSON object is refused even when signed")
    func payloadNotObject() throws {
        let chain = try Fresh.chain.get()
        let signed = try Fresh.signer(chain).sign(payloadBytes: Array("[1717588800000]".utf8))
        let verifier = try Vectors.verifier(chain.root)
        #expect(try Vectors.code { try verifier.verify(signed) } == .invalidPayload)
    }

    @Test("inputs without exactly three non-empty parts are refused")
    func partCounts() throws {
        let parts = Vectors.parts(try Self.original())
        for text in [
            parts[0] + "." + parts[1], parts.joined(separator: ".") + "." + parts[1], parts[0], "",
            "." + parts[1] + "." + parts[2], parts[0] + ".." + parts[2], "..",
        ] {
            #expect(try Self.code(text) == .malformed, "\(text.prefix(20))…")
        }
    }

    @Test("base64url padding is refused")
    func padding() throws {
        let parts = Vectors.parts(try Self.original())
        // The header encodes to a length that is not a multiple of 4, so standard base64 would pad it.
        #expect(parts[0].count % 4 != 0)
        let padded = parts[0] + String(repeating: "=", count: 4 - parts[0].count % 4)
        #expect(try Self.code([padded, parts[1], parts[2]].joined(separator: ".")) == .malformed)
    }

    @Test("standard base64 characters and whitespace in a part are refused", arguments: ["+", "/", " ", "\n", "%"])
    func foreignCharacters(_ character: String) throws {
        var parts = Vectors.parts(try Self.original())
        parts[1] = String(parts[1].prefix(8)) + character + String(parts[1].dropFirst(9))
        #expect(try Self.code(parts.joined(separator: ".")) == .malformed)
    }

    @Test("a non-canonical final base64url character is refused")
    func nonCanonicalEnding() throws {
        var parts = Vectors.parts(try Self.original())
        // A 64-byte signature is 86 characters: the last one carries 2 unused bits, which must be zero.
        let last = try #require(parts[2].last)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let index = try #require(alphabet.firstIndex(of: last))
        parts[2] = String(parts[2].dropLast()) + String(alphabet[index | 1])
        #expect(try Self.code(parts.joined(separator: ".")) == .malformed)
    }

    @Test("a DER-encoded signature in place of r ‖ s is refused")
    func derSignature() throws {
        var parts = Vectors.parts(try Self.original())
        let raw = try Base64URL.decode(Array(parts[2].utf8))
        parts[2] = Base64URL.encode(try ES256Signature.der(fromRaw: raw))
        let error = try Vectors.error { try Self.verifier().verify(parts.joined(separator: ".")) }
        #expect(error?.code == .invalidSignature)
        #expect(error?.message.contains("exactly 64 bytes") == true)
    }

    @Test("a signature of the wrong length is refused", arguments: [63, 65, 96])
    func wrongSignatureLength(_ length: Int) throws {
        var parts = Vectors.parts(try Self.original())
        var raw = try Base64URL.decode(Array(parts[2].utf8))
        raw = length < raw.count ? Array(raw.prefix(length)) : raw + [UInt8](repeating: 0, count: length - raw.count)
        parts[2] = Base64URL.encode(raw)
        #expect(try Self.code(parts.joined(separator: ".")) == .invalidSignature)
    }

    @Test("input over the size limit is refused before it is read")
    func oversized() throws {
        let original = try Self.original()
        let small = try JWSVerifier(trustAnchors: [Vectors.appleLibraryTestCA()], maximumSize: original.utf8.count - 1)
        #expect(try Vectors.code { try small.verify(original) } == .tooLarge)
        let huge = [UInt8](repeating: UInt8(ascii: "A"), count: JWSVerifier.defaultMaximumSize + 1)
        #expect(try Vectors.code { try Self.verifier().verify(huge) } == .tooLarge)
    }

    @Test("an x5c entry that is not a certificate, or has whitespace, is refused")
    func badCertificateEntries() throws {
        let original = try Self.original()
        var header = try Vectors.header(original)
        guard case .array(var x5c)? = header["x5c"], case .string(let leaf) = x5c[0] else {
            Issue.record("the fixture's x5c is not an array of strings")
            return
        }
        for replacement in [
            JSONValue.string("AAAA"), .string(leaf.prefix(64) + "\n" + leaf.dropFirst(64)), .string(""),
        ] {
            x5c[0] = replacement
            header["x5c"] = .array(x5c)
            let tampered = Vectors.replacingHeader(original, with: JSONValue.object(header).serialized())
            #expect(try Self.code(tampered) == .invalidCertificate)
        }
        x5c[0] = .integer(1)
        header["x5c"] = .array(x5c)
        #expect(
            try Self.code(Vectors.replacingHeader(original, with: JSONValue.object(header).serialized())) == .malformed)
    }

    @Test("an empty or overlong x5c is refused")
    func chainLengths() throws {
        let original = try Self.original()
        var header = try Vectors.header(original)
        header["x5c"] = .array([])
        #expect(
            try Self.code(Vectors.replacingHeader(original, with: JSONValue.object(header).serialized()))
                == .missingCertificateChain)
        guard case .array(let x5c)? = try Vectors.header(original)["x5c"] else { return }
        header["x5c"] = .array(x5c + x5c)
        #expect(
            try Self.code(Vectors.replacingHeader(original, with: JSONValue.object(header).serialized()))
                == .invalidCertificate)
    }

    @Test("a leaf whose key is not P-256 cannot sign ES256")
    func rsaLeaf() throws {
        let chain = try DevelopmentChain.create(algorithm: .rsa2048)
        let original = try Self.original()
        var header = try Vectors.header(original)
        header["x5c"] = .array([.string(Base64.encode(chain.signer.derEncoded))])
        let tampered = Vectors.replacingHeader(original, with: JSONValue.object(header).serialized())
        #expect(try Self.code(tampered) == .unsupportedAlgorithm)
    }

    @Test("the embedded root is never an anchor: a chain of its own is untrusted")
    func selfContainedChain() throws {
        let outsider = try Fresh.appleLikeChain.get()
        let signed = try Fresh.signer(outsider).sign(
            payload: JSONObject(["signedDate": .integer(Fresh.signedDate.millisecondsSince1970)]))
        let verifier = try Vectors.verifier(Fresh.chain.get().root)
        #expect(try Vectors.code { try verifier.verify(signed) } == .untrustedChain)
    }
}
