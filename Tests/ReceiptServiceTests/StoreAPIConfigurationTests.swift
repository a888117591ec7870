import Foundation
import ReceiptCrypto
import ReceiptService
import ReceiptSigner
import Testing

@Suite("store_api is validated before anything listens")
struct StoreAPIConfigurationTests {
    static let app =
        #"{"bundle_id":"com.example.game","app_apple_id":1234567890,"catalog_id":"game","#
        + #""notification_urls":["http://127.0.0.1:9000/apple"],"storefront":"USA","storefront_id":"143441"}"#
    static let key =
        #"{"issuer_id":"57246542-96fe-1a63-e053-0824d011072a","key_id":"ABC123DEFG","public_key":"api.pub.pem"}"#

    /// The configuration files with an API public key (EC) and an RSA one written out too.
    func files() throws -> ConfigurationTests.Files {
        let files = try ConfigurationTests.Files()
        try files.write("api.pub.pem", try PrivateKey.generate(.ecP256).publicKeyPEM)
        try files.write("rsa.pub.pem", try PrivateKey.generate(.rsa2048).publicKeyPEM)
        return files
    }

    static func storeAPI(apps: String = "[\(app)]", keys: String = "[\(key)]", extra: String = "") -> String {
        #""store_api":{"apps":\#(apps),"keys":\#(keys)\#(extra)}"#
    }

    @Test("store_api is read with its apps, keys and retry schedule; x5c ends at the trusted root")
    func valid() throws {
        let configuration = try files().configuration(
            ConfigurationTests.Files.valid + [Self.storeAPI(extra: #","notification_retry_seconds":[5,60]"#)])
        let api = try #require(configuration.storeAPI)
        #expect(api.apps.map(\.bundleID) == ["com.example.game"])
        #expect(api.apps.first?.appAppleID == 1_234_567_890)
        #expect(api.apps.first?.notificationURLs == ["http://127.0.0.1:9000/apple"])
        #expect(api.apps.first?.storefront == "USA")
        #expect(api.keys.map(\.keyID) == ["ABC123DEFG"])
        #expect(api.notificationRetrySeconds == [5, 60])
        #expect(
            api.signer.chain.map(\.subject)
                == [
                    ServiceFixture.chain.signer, ServiceFixture.chain.intermediate,
                    ServiceFixture.chain.root,
                ].map(\.subject))
    }

    @Test("without notification_retry_seconds, Apple's schedule: 1, 12, 24, 48 and 72 hours")
    func appleSchedule() throws {
        let configuration = try files().configuration(ConfigurationTests.Files.valid + [Self.storeAPI()])
        #expect(configuration.storeAPI?.notificationRetrySeconds == [3600, 43_200, 86_400, 172_800, 259_200])
    }

    @Test(
        "an invalid store_api is refused naming the key and the rule",
        arguments: [
            (storeAPI(apps: "[]"), "store_api.apps"),
            (storeAPI(keys: "[]"), "store_api.keys"),
            (
                storeAPI(apps: #"[{"bundle_id":"com.example.game","app_apple_id":1,"catalog_id":"nope"}]"#),
                "store_api.apps[0].catalog_id"
            ),
            (
                storeAPI(apps: #"[{"bundle_id":"com.example.game","catalog_id":"game"}]"#),
                "store_api.apps[0].app_apple_id"
            ),
            (storeAPI(apps: "[\(app),\(app)]"), "store_api.apps[1].bundle_id"),
            (
                storeAPI(
                    apps: #"[{"bundle_id":"a","app_apple_id":1,"catalog_id":"game","notification_urls":["https://x"]}]"#
                ),
                "store_api.apps[0].notification_urls[0]"
            ),
            (
                storeAPI(
                    apps:
                        #"[{"bundle_id":"a","app_apple_id":1,"catalog_id":"game","notification_urls":["http://h:99999/"]}]"#
                ), "store_api.apps[0].notification_urls[0]"
            ),
            (
                storeAPI(apps: #"[{"bundle_id":"a","app_apple_id":1,"catalog_id":"game","storefront":"us"}]"#),
                "store_api.apps[0].storefront"
            ),
            (
                storeAPI(keys: #"[{"issuer_id":"i","key_id":"K","public_key":"rsa.pub.pem"}]"#),
                "store_api.keys[0].public_key"
            ),
            (
                storeAPI(keys: #"[{"issuer_id":"i","key_id":"K","public_key":"catalog.json"}]"#),
                "store_api.keys[0].public_key"
            ),
            (
                storeAPI(keys: #"[{"issuer_id":"i","key_id":"K","public_key":"missing.pem"}]"#),
                "store_api.keys[0].public_key"
            ),
            (storeAPI(keys: "[\(key),\(key)]"), "store_api.keys[1].key_id"),
            (storeAPI(extra: #","notification_retry_seconds":[0]"#), "store_api.notification_retry_seconds[0]"),
            (storeAPI(extra: #","colour":1"#), "store_api.colour"),
        ])
    func invalid(member: String, path: String) throws {
        let files = try files()
        #expect {
            try files.configuration(ConfigurationTests.Files.valid + [member])
        } throws: { error in
            (error as? ServiceConfigurationError)?.path == path
        }
    }

    @Test("store_api refuses a signing chain that does not reach its root, since x5c must end at it")
    func needsRoot() throws {
        let files = try files()
        let other = try DevelopmentChain.create(algorithm: .ecP256)
        try files.write("other-root.pem", other.root.pemEncoded)
        let members =
            ConfigurationTests.Files.valid.filter { !$0.hasPrefix(#""trust""#) } + [
                #""trust":["other-root.pem"]"#, Self.storeAPI(),
            ]
        #expect {
            try files.configuration(members)
        } throws: { error in
            guard let error = error as? ServiceConfigurationError else { return false }
            return error.path == "store_api" && error.rule.contains("must end at its root")
        }
    }

    @Test("store_api needs a signing key, and an EC P-256 one")
    func needsECSigning() throws {
        let files = try files()
        let withoutSigning = ConfigurationTests.Files.valid.filter { !$0.hasPrefix(#""signing""#) } + [Self.storeAPI()]
        #expect {
            try files.configuration(withoutSigning)
        } throws: { error in
            (error as? ServiceConfigurationError)?.path == "store_api"
        }
        let rsa = try DevelopmentChain.create(algorithm: .rsa2048)
        try files.write("rsa-signer.key", rsa.signerKey.pkcs8PEM)
        try files.write("rsa-signer.pem", rsa.signer.pemEncoded)
        try files.write("rsa-root.pem", rsa.root.pemEncoded)
        try files.write("rsa-intermediate.pem", rsa.intermediate.pemEncoded)
        let rsaSigning =
            ConfigurationTests.Files.valid.filter { !$0.hasPrefix(#""signing""#) && !$0.hasPrefix(#""trust""#) } + [
                #""trust":["rsa-root.pem"]"#,
                #""signing":{"key":"rsa-signer.key","certificate":"rsa-signer.pem","chain":["rsa-intermediate.pem"]}"#,
                Self.storeAPI(),
            ]
        #expect {
            try files.configuration(rsaSigning)
        } throws: { error in
            guard let error = error as? ServiceConfigurationError else { return false }
            return error.path == "store_api" && error.rule.contains("EC P-256")
        }
    }
}
