import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import StrictJSON

/// One key that may sign App Store Server API tokens, as App Store Connect issues them: the issuer it belongs to,
/// its key id, and its public half (the private half stays with the caller).
public struct APIKey: Sendable {
    /// The `iss` its tokens carry: the issuer id of the team.
    public let issuerID: String
    /// The `kid` of its tokens' header.
    public let keyID: String
    /// Checks its tokens' ES256 signatures.
    public let publicKey: PublicKey

    /// - Throws: ``APITokenError/Code/unsupportedAlgorithm`` when the key is not EC P-256.
    public init(issuerID: String, keyID: String, publicKey: PublicKey) throws(APITokenError) {
        try APITokenError.requireES256(publicKey.algorithm, "key \(keyID)")
        self.issuerID = issuerID
        self.keyID = keyID
        self.publicKey = publicKey
    }
}

/// What an accepted token says.
public struct APITokenClaims: Hashable, Sendable {
    /// `iss`.
    public var issuerID: String
    /// The header's `kid`.
    public var keyID: String
    /// `bid`: the app the caller acts for.
    public var bundleID: String
    /// `iat`, when the token has one (Apple's own libraries leave it out).
    public var issuedAt: ReceiptDate?
    /// `exp`.
    public var expires: ReceiptDate
}

/// Why an API token was refused: a code to switch on and a message naming the claim and the rule.
public struct APITokenError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, CaseIterable, Sendable {
        /// Not a JWS of three base64url parts with JSON object header and claims, or a claim of the wrong type.
        case malformed
        /// `alg` other than `ES256`, or a configured key that is not EC P-256.
        case unsupportedAlgorithm = "unsupported_algorithm"
        /// No `kid`, or one no configured key has.
        case unknownKey = "unknown_key"
        /// The signature does not verify with the key of `kid`.
        case invalidSignature = "invalid_signature"
        /// `iss` is not the issuer of the key of `kid`.
        case wrongIssuer = "wrong_issuer"
        /// `aud` is not `appstoreconnect-v1`.
        case wrongAudience = "wrong_audience"
        /// `bid` is missing or names no configured app.
        case unknownBundleID = "unknown_bundle_id"
        /// `exp` is missing or has passed.
        case expired
        /// `iat` lies in the future beyond the allowed clock skew.
        case notYetValid = "not_yet_valid"
        /// `exp` lies more than ``APITokenVerifier/maximumLifetimeSeconds`` after `iat` (or after now, without `iat`).
        case lifetimeTooLong = "lifetime_too_long"
        /// Signing a token failed (``APITokenSigner``).
        case signingFailed = "signing_failed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// Throws ``Code/unsupportedAlgorithm`` naming `what` unless `algorithm` is EC P-256, the curve of ES256.
    static func requireES256(_ algorithm: KeyAlgorithm, _ what: String) throws(APITokenError) {
        guard case .ec(curve: "P-256") = algorithm else {
            throw APITokenError(
                .unsupportedAlgorithm, "\(what) is \(algorithm); API tokens are signed ES256 (EC P-256)")
        }
    }
}

/// Checks `Authorization: Bearer` tokens of the App Store Server API as Apple does: a JWS signed ES256 by one of
/// the configured keys (header `kid`), with `iss` the key's issuer, `aud` `appstoreconnect-v1`, `bid` a configured
/// app, `exp` not passed and at most an hour after `iat` (after now when the token has no `iat`), and `iat`, when
/// present, not in the future.
public struct APITokenVerifier: Sendable {
    /// The only audience accepted.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime accepted, as Apple's: 60 minutes.
    public static let maximumLifetimeSeconds: Int64 = 3600
    /// How far a caller's clock may run ahead: `iat` up to this many seconds in the future is accepted.
    public static let allowedClockSkewSeconds: Int64 = 60
    /// Longest token accepted, in bytes.
    public static let maximumTokenBytes = 8192

    private let keys: [String: APIKey]
    private let bundleIDs: Set<String>

    /// Accepts tokens signed by `keys` (by key id; a key id given twice keeps the last) for the apps `bundleIDs`.
    public init(keys: [APIKey], bundleIDs: Set<String>) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { $1 })
        self.bundleIDs = bundleIDs
    }

    /// The claims of `token` when it passes every check at `now`.
    public func verify(_ token: [UInt8], at now: ReceiptDate) throws(APITokenError) -> APITokenClaims {
        guard token.count <= Self.maximumTokenBytes else {
            throw APITokenError(.malformed, "the token is longer than \(Self.maximumTokenBytes) bytes")
        }
        let parts: (header: Range<Int>, payload: Range<Int>, signature: Range<Int>)
        let header: JSONObject
        let claims: JSONObject
        let signature: [UInt8]
        do throws(JWSError) {
            parts = try JWSVerifier.split(token)
            header = try Self.object(JWSVerifier.decode(token[parts.header], part: "header"), "header")
            claims = try Self.object(JWSVerifier.decode(token[parts.payload], part: "payload"), "claims")
            signature = try JWSVerifier.decode(token[parts.signature], part: "signature")
        } catch {
            throw APITokenError(.malformed, error.message)
        }
        guard case .string("ES256")? = header["alg"] else {
            throw APITokenError(.unsupportedAlgorithm, "header.alg must be \"ES256\", not \(Self.show(header["alg"]))")
        }
        guard case .string(let keyID)? = header["kid"] else {
            throw APITokenError(
                .unknownKey, "header.kid must be a string naming the key, not \(Self.show(header["kid"]))")
        }
        guard let key = keys[keyID] else { throw APITokenError(.unknownKey, "no key \"\(keyID)\" is configured") }
        let der: [UInt8]
        do {
            der = try ES256Signature.der(fromRaw: signature)
        } catch {
            throw APITokenError(.invalidSignature, "the signature is not 64 bytes r ‖ s")
        }
        guard key.publicKey.isValidSignature(der[...], for: token[..<parts.payload.upperBound], digest: .sha256) else {
            throw APITokenError(.invalidSignature, "the ES256 signature does not verify with key \"\(keyID)\"")
        }
        return try Self.check(claims, key: key, bundleIDs: bundleIDs, at: now)
    }

    private static func check(_ claims: JSONObject, key: APIKey, bundleIDs: Set<String>, at now: ReceiptDate)
        throws(APITokenError) -> APITokenClaims
    {
        guard case .string(let issuer)? = claims["iss"], issuer == key.issuerID else {
            throw APITokenError(
                .wrongIssuer, "claims.iss must be the issuer of key \"\(key.keyID)\", not \(show(claims["iss"]))")
        }
        guard case .string(audience)? = claims["aud"] else {
            throw APITokenError(.wrongAudience, "claims.aud must be \"\(audience)\", not \(show(claims["aud"]))")
        }
        guard case .string(let bundleID)? = claims["bid"], bundleIDs.contains(bundleID) else {
            throw APITokenError(.unknownBundleID, "claims.bid must name a configured app, not \(show(claims["bid"]))")
        }
        guard let expires = try seconds(claims, "exp") else {
            throw APITokenError(.expired, "claims.exp is required")
        }
        guard now < expires else { throw APITokenError(.expired, "the token expired at \(expires.rfc3339)") }
        let issuedAt = try seconds(claims, "iat")
        if let issuedAt, issuedAt.millisecondsSince1970 > now.millisecondsSince1970 + allowedClockSkewSeconds * 1000 {
            throw APITokenError(.notYetValid, "claims.iat \(issuedAt.rfc3339) lies in the future")
        }
        let start = issuedAt ?? now
        guard expires.millisecondsSince1970 - start.millisecondsSince1970 <= maximumLifetimeSeconds * 1000 else {
            throw APITokenError(
                .lifetimeTooLong,
                "claims.exp is more than \(maximumLifetimeSeconds / 60) minutes after "
                    + (issuedAt == nil ? "now (the token has no iat)" : "claims.iat"))
        }
        return APITokenClaims(
            issuerID: issuer, keyID: key.keyID, bundleID: bundleID, issuedAt: issuedAt, expires: expires)
    }

    /// A NumericDate claim: whole seconds since 1970, nil when absent.
    private static func seconds(_ claims: JSONObject, _ name: String) throws(APITokenError) -> ReceiptDate? {
        guard let value = claims[name] else { return nil }
        guard case .number(let text) = value, let seconds = Int64(text), seconds >= 0, seconds < 253_402_300_800
        else {
            throw APITokenError(.malformed, "claims.\(name) must be whole seconds since 1970, not \(show(value))")
        }
        return ReceiptDate(secondsSince1970: seconds)
    }

    private static func object(_ bytes: [UInt8], _ name: String) throws(JWSError) -> JSONObject {
        guard case .object(let object)? = try? JSONValue(parsing: bytes) else {
            throw JWSError(.malformed, "the \(name) is not a JSON object")
        }
        return object
    }

    private static func show(_ value: JSONValue?) -> String {
        value.map { String(decoding: $0.serializedBytes(), as: UTF8.self) } ?? "absent"
    }
}

/// Makes App Store Server API tokens as App Store Connect keys sign them: for clients and tests of the API.
public struct APITokenSigner: Sendable {
    public let key: PrivateKey
    public let keyID: String
    public let issuerID: String

    /// - Throws: ``APITokenError/Code/unsupportedAlgorithm`` when the key is not EC P-256.
    public init(key: PrivateKey, keyID: String, issuerID: String) throws(APITokenError) {
        try APITokenError.requireES256(key.algorithm, "key \(keyID)")
        self.key = key
        self.keyID = keyID
        self.issuerID = issuerID
    }

    /// A token for `bundleID` expiring at `expires`, with `iat` when `issuedAt` is given.
    public func token(bundleID: String, issuedAt: ReceiptDate?, expires: ReceiptDate) throws(APITokenError) -> String {
        var header = JSONObject()
        header["alg"] = .string("ES256")
        header["kid"] = .string(keyID)
        header["typ"] = .string("JWT")
        var claims = JSONObject()
        claims["iss"] = .string(issuerID)
        if let issuedAt { claims["iat"] = .integer(issuedAt.millisecondsSince1970 / 1000) }
        claims["exp"] = .integer(expires.millisecondsSince1970 / 1000)
        claims["aud"] = .string(APITokenVerifier.audience)
        claims["bid"] = .string(bundleID)
        let signingInput =
            Base64URL.encodedBytes(JSONValue.object(header).serializedBytes()) + [UInt8(ascii: ".")]
            + Base64URL.encodedBytes(JSONValue.object(claims).serializedBytes())
        do {
            let raw = try ES256Signature.raw(fromDER: key.signature(for: signingInput, digest: .sha256))
            return String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(raw)
        } catch {
            throw APITokenError(.signingFailed, "ECDSA signing: \(error)")
        }
    }
}
