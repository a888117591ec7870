internal import CReceiptOpenSSL
import Glibc
import Synchronization

/// The kind and size of a key, as far as receipts care.
public enum KeyAlgorithm: Hashable, Sendable, CustomStringConvertible {
    case rsa(bits: Int)
    case ec(curve: String)
    case other(String)

    public var description: String {
        switch self {
        case .rsa(let bits): "RSA-\(bits)"
        case .ec(let curve): "EC \(curve)"
        case .other(let name): name
        }
    }

    /// Whether receipts may be signed with it: RSA of 2048 bits or more, or EC P-256.
    public var isSupportedForSigning: Bool {
        switch self {
        case .rsa(let bits): bits >= 2048
        case .ec(let curve): curve == "P-256" || curve == "prime256v1"
        case .other: false
        }
    }

    static func of(_ key: OpaquePointer) -> KeyAlgorithm {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return .rsa(bits: Int(EVP_PKEY_get_bits(key)))
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return .ec(curve: "unknown") }
            let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .ec(curve: curve == "prime256v1" ? "P-256" : curve)
        default:
            return .other(String(cString: OBJ_nid2sn(EVP_PKEY_get_base_id(key))))
        }
    }
}

/// A public key (RSA or EC) that checks signatures.
public final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer
    private let contexts: KeyContextPool

    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
        contexts = KeyContextPool(key: pointer, initialise: EVP_PKEY_verify_init)
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The same key as an OpenSSL key of its own (EVP_PKEY_dup), with no contexts made yet; nil when OpenSSL
    /// cannot copy it.
    func independentCopy() -> PublicKey? {
        EVP_PKEY_dup(pointer).map(PublicKey.init(owning:))
    }

    /// Reads a public key: PEM (`PUBLIC KEY`, a SubjectPublicKeyInfo) or the same in DER.
    ///
    /// - Throws: ``CryptoError/Reason/invalidPublicKey`` for anything else, trailing bytes included.
    public convenience init(pemOrDER bytes: [UInt8]) throws(CryptoError) {
        clearOpenSSLErrors()
        if String(decoding: bytes, as: UTF8.self).contains("-----BEGIN") {
            let bio = try MemoryBIO(copying: bytes)
            guard let key = PEM_read_bio_PUBKEY(bio.pointer, nil, refusePassphrase, nil) else {
                throw CryptoError(.invalidPublicKey)
            }
            self.init(owning: key)
            return
        }
        guard let decoded = decodeWhole(bytes, with: { d2i_PUBKEY(nil, $0, $1) }, free: EVP_PKEY_free) else {
            throw CryptoError(.invalidPublicKey)
        }
        self.init(owning: decoded)
    }

    /// Whether `signature` is a valid signature of the digest `hashed`, which `digest` produced (PKCS#1 v1.5 for
    /// RSA, a DER `ECDSA-Sig-Value` for EC). Equivalent to ``isValidSignature(_:for:digest:)`` over the message.
    public func isValidSignature(_ signature: ArraySlice<UInt8>, forDigest hashed: [UInt8], digest: DigestAlgorithm)
        -> Bool
    {
        contexts.use(digest) { context in
            signature.withUnsafeBufferPointer { signatureBuffer in
                hashed.withUnsafeBufferPointer { digestBuffer in
                    EVP_PKEY_verify(
                        context, signatureBuffer.baseAddress, signatureBuffer.count, digestBuffer.baseAddress,
                        digestBuffer.count)
                }
            } == 1
        } ?? false
    }

    public var algorithm: KeyAlgorithm { KeyAlgorithm.of(pointer) }

    /// Whether `signature` is a valid signature of `message` under this key with `digest`: PKCS#1 v1.5 for RSA,
    /// a DER `ECDSA-Sig-Value` for EC.
    public func isValidSignature(
        _ signature: ArraySlice<UInt8>,
        for message: ArraySlice<UInt8>,
        digest: DigestAlgorithm
    ) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            clearOpenSSLErrors()
        }
        guard EVP_DigestVerifyInit(context, nil, digest.implementation, nil, pointer) == 1 else { return false }
        let result = signature.withUnsafeBufferPointer { signatureBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                EVP_DigestVerify(
                    context, signatureBuffer.baseAddress, signatureBuffer.count, messageBuffer.baseAddress,
                    messageBuffer.count)
            }
        }
        return result == 1
    }

    /// ``isValidSignature(_:for:digest:)`` for whole arrays.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], digest: DigestAlgorithm) -> Bool {
        isValidSignature(signature[...], for: message[...], digest: digest)
    }
}

/// A private key that signs receipts and certificates.
public final class PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer
    private let contexts: KeyContextPool

    private init(owning pointer: OpaquePointer) {
        self.pointer = pointer
        contexts = KeyContextPool(key: pointer, initialise: EVP_PKEY_sign_init)
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Reads a private key: PEM (`PRIVATE KEY` PKCS#8, `RSA PRIVATE KEY` PKCS#1, `EC PRIVATE KEY` SEC1) or the same
    /// forms in DER. Encrypted keys are refused rather than prompting for a passphrase.
    public convenience init(pemOrDER bytes: [UInt8]) throws(CryptoError) {
        clearOpenSSLErrors()
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN") {
            if text.contains("ENCRYPTED") { throw CryptoError(.encryptedPrivateKey) }
            let bio = try MemoryBIO(copying: bytes)
            guard let key = PEM_read_bio_PrivateKey(bio.pointer, nil, refusePassphrase, nil) else {
                throw CryptoError(.invalidPrivateKey)
            }
            self.init(owning: key)
            return
        }
        guard let decoded = decodeWhole(bytes, with: { d2i_AutoPrivateKey(nil, $0, $1) }, free: EVP_PKEY_free) else {
            throw CryptoError(.invalidPrivateKey)
        }
        self.init(owning: decoded)
    }

    /// A new key: RSA-2048 or EC P-256.
    public static func generate(_ algorithm: GeneratedKeyAlgorithm) throws(CryptoError) -> PrivateKey {
        clearOpenSSLErrors()
        let name = algorithm == .rsa2048 ? "RSA" : "EC"
        guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else {
            throw CryptoError(.operationFailed("creating a key generation context"))
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw CryptoError(.operationFailed("starting key generation")) }
        let configured =
            switch algorithm {
            case .rsa2048: EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048)
            case .ecP256: EVP_PKEY_CTX_set_group_name(context, "P-256")
            }
        guard configured == 1 else { throw CryptoError(.operationFailed("configuring key generation")) }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw CryptoError(.operationFailed("generating a key"))
        }
        return PrivateKey(owning: key)
    }

    public var algorithm: KeyAlgorithm { KeyAlgorithm.of(pointer) }

    /// Whether this key is the private half of the certificate's public key.
    public func matches(_ certificate: Certificate) -> Bool {
        defer { clearOpenSSLErrors() }
        return X509_check_private_key(certificate.pointer, pointer) == 1
    }

    /// Signs `message` with `digest`: PKCS#1 v1.5 for RSA, a DER `ECDSA-Sig-Value` for EC.
    public func signature(for message: [UInt8], digest: DigestAlgorithm) throws(CryptoError) -> [UInt8] {
        clearOpenSSLErrors()
        guard let context = EVP_MD_CTX_new() else { throw CryptoError(.operationFailed("allocating a digest context")) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, digest.implementation, nil, pointer) == 1 else {
            throw CryptoError(.operationFailed("starting a signature"))
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer { buffer in
            EVP_DigestSign(context, nil, &length, buffer.baseAddress, buffer.count)
        }
        guard sized == 1 else { throw CryptoError(.operationFailed("sizing a signature")) }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { output in
            message.withUnsafeBufferPointer { buffer in
                EVP_DigestSign(context, output.baseAddress, &length, buffer.baseAddress, buffer.count)
            }
        }
        guard signed == 1 else { throw CryptoError(.operationFailed("signing")) }
        return Array(signature.prefix(length))
    }

    /// Signs the digest `hashed`, which `digest` produced; the same signature as ``signature(for:digest:)`` over the
    /// message (PKCS#1 v1.5 for RSA, a DER `ECDSA-Sig-Value` for EC).
    public func signature(forDigest hashed: [UInt8], digest: DigestAlgorithm) throws(CryptoError) -> [UInt8] {
        let signature: [UInt8]? =
            contexts.use(digest) { context in
                var length = 0
                guard EVP_PKEY_sign(context, nil, &length, hashed, hashed.count) == 1 else { return nil }
                var output = [UInt8](repeating: 0, count: length)
                guard EVP_PKEY_sign(context, &output, &length, hashed, hashed.count) == 1 else { return nil }
                return Array(output.prefix(length))
            } ?? nil
        guard let signature else { throw CryptoError(.operationFailed("signing")) }
        return signature
    }

    /// The key as an unencrypted PKCS#8 PEM block (`-----BEGIN PRIVATE KEY-----`).
    public var pkcs8PEM: String {
        get throws(CryptoError) {
            let bio = try MemoryBIO()
            guard PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
                throw CryptoError(.operationFailed("writing a PEM private key"))
            }
            return bio.text
        }
    }

    /// The key's public half as a PEM block (`-----BEGIN PUBLIC KEY-----`, a SubjectPublicKeyInfo).
    public var publicKeyPEM: String {
        get throws(CryptoError) {
            let bio = try MemoryBIO()
            guard PEM_write_bio_PUBKEY(bio.pointer, pointer) == 1 else {
                throw CryptoError(.operationFailed("writing a PEM public key"))
            }
            return bio.text
        }
    }
}

/// Key types ``PrivateKey/generate(_:)`` creates.
public enum GeneratedKeyAlgorithm: String, Hashable, Sendable, CaseIterable {
    case rsa2048 = "rsa"
    case ecP256 = "ec"
}

/// A passphrase callback that supplies none, so OpenSSL fails instead of prompting on the terminal.
private let refusePassphrase:
    @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
        _, _, _, _ in 0
    }

/// `EVP_PKEY_CTX`s of one key, initialised once per digest (for verifying or signing) and reused: a verifier
/// checks many signatures with the same key, and OpenSSL 3 spends a measurable share of each operation setting a
/// context up (about 27k instructions for RSA-2048). Each context is lent to one thread at a time. Idle contexts
/// are kept in 16 parts, each behind its own lock, and a thread borrows from and returns to the part its identity
/// picks, so that threads verifying with the same key at once seldom wait for each other.
private final class KeyContextPool: Sendable {
    /// An initialised context, owned by the pool or by the one thread that borrowed it.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// The idle contexts of one part, a stack per digest, at the digest's position in `DigestAlgorithm.allCases`
    /// (a dictionary keyed by digest allocated on every borrow and return).
    private final class Part: Sendable {
        let idle = Mutex<[[Context]]>(DigestAlgorithm.allCases.map { _ in [] })
    }

    /// Idle contexts kept per part and digest; a thread holds one at a time, and few threads share a part.
    private static let capacity = 4
    private let key: KeyPointer
    private let initialise: @Sendable (OpaquePointer?) -> Int32
    /// There are 2^partBits parts.
    private static let partBits = 4
    private let parts = (0..<(1 << partBits)).map { _ in Part() }

    init(key: OpaquePointer, initialise: @escaping @Sendable (OpaquePointer?) -> Int32) {
        self.key = KeyPointer(pointer: key)
        self.initialise = initialise
    }

    deinit {
        for part in parts {
            part.idle.withLock { pools in
                for context in pools.joined() { EVP_PKEY_CTX_free(context.pointer) }
            }
        }
    }

    /// Runs `body` with a context for `digest`; nil when OpenSSL cannot make one.
    func use<Result>(_ digest: DigestAlgorithm, _ body: (OpaquePointer) -> Result) -> Result? {
        let part = currentPart()
        let stack = digest.position
        guard let context = part.idle.withLock({ $0[stack].popLast() }) ?? make(digest) else { return nil }
        let result = body(context.pointer)
        clearOpenSSLErrors()
        let kept = part.idle.withLock { pools in
            guard pools[stack].count < Self.capacity else { return false }
            pools[stack].append(context)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context.pointer) }
        return result
    }

    /// The part of the calling thread: the top `partBits` bits of its identity multiplied by a large odd constant
    /// (a Fibonacci hash, which spreads identities that differ only in low or middle bits, as thread addresses do).
    private func currentPart() -> Part {
        parts[Int(truncatingIfNeeded: (UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> (64 - Self.partBits))]
    }

    private func make(_ digest: DigestAlgorithm) -> Context? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        guard initialise(context) == 1, EVP_PKEY_CTX_set_signature_md(context, digest.implementation) == 1 else {
            EVP_PKEY_CTX_free(context)
            clearOpenSSLErrors()
            return nil
        }
        return Context(pointer: context)
    }
}

/// The key a pool makes contexts for; the pool's owner keeps it alive.
private struct KeyPointer: @unchecked Sendable {
    let pointer: OpaquePointer
}
