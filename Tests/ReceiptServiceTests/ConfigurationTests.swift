import Foundation
import ReceiptService
import Testing

@Suite("The configuration file is validated before anything listens")
struct ConfigurationTests {
    /// A directory with the development chain and a catalog written out, and a valid configuration's members.
    final class Files {
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let chain = ServiceFixture.chain
            try write("root.pem", chain.root.pemEncoded)
            try write("intermediate.pem", chain.intermediate.pemEncoded)
            try write("signer.pem", chain.signer.pemEncoded)
            try write("signer.key", chain.signerKey.pkcs8PEM)
            try write("other.key", ServiceFixture.chain.rootKey.pkcs8PEM)
            try write("catalog.json", EntitlementsEndpointTests.catalogJSON)
            try write("bad-catalog.json", #"{"products": [{"id": 7}]}"#)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }

        static let valid = [
            #""listen":"127.0.0.1:0""#, #""environment":"Sandbox""#, #""ledger":"ledger.sqlite""#,
            #""trust":["root.pem"]"#,
            #""signing":{"key":"signer.key","certificate":"signer.pem","chain":["intermediate.pem"]}"#,
            #""tokens":["0123456789abcdef0123456789abcdef"]"#, #""catalogs":{"game":"catalog.json"}"#,
            #""limits":{"max_body_bytes":65536,"threads":2}"#,
        ]

        func configuration(_ members: [String]) throws -> ServiceConfiguration {
            try ServiceConfiguration(
                json: Array("{\(members.joined(separator: ","))}".utf8), baseDirectory: directory.path)
        }
    }

    @Test("a complete configuration is read with paths relative to its directory")
    func validConfiguration() throws {
        let files = try Files()
        let configuration = try files.configuration(Files.valid)
        #expect(configuration.environment == .sandbox)
        #expect(configuration.port == 0)
        #expect(configuration.ledgerPath == files.directory.path + "/ledger.sqlite")
        #expect(configuration.signer != nil)
        #expect(configuration.catalogs["game"] != nil)
        #expect(configuration.maximumBodyBytes == 65536)
        #expect(configuration.threads == 2)
    }

    @Test(
        "an invalid configuration is refused naming the key and the rule",
        arguments: [
            (#""environment":"Staging""#, "environment"),
            (#""listen":"localhost""#, "listen"),
            (#""listen":"::1:80""#, "listen"),
            (#""listen":"127.0.0.1:99999""#, "listen"),
            (#""trust":[]"#, "trust"),
            (#""trust":["missing.pem"]"#, "trust[0]"),
            (#""trust":["catalog.json"]"#, "trust[0]"),
            (#""intermediates":["missing.pem"]"#, "intermediates[0]"),
            (#""intermediates":["catalog.json"]"#, "intermediates[0]"),
            (#""intermediates":["intermediate.pem","signer.pem"]"#, "intermediates[1]"),
            (#""intermediates":["root.pem"]"#, "intermediates[0]"),
            (#""intermediates":"intermediate.pem""#, "intermediates"),
            (#""signing":{"key":"other.key","certificate":"signer.pem"}"#, "signing"),
            (#""signing":{"key":"signer.key"}"#, "signing.certificate"),
            (#""tokens":["short"]"#, "tokens[0]"),
            (#""tokens":["0123456789abcdef0123456789abcdef","0123456789abcdef0123456789abcdef"]"#, "tokens"),
            (#""catalogs":{"game":"root.pem"}"#, "catalogs.game"),
            (#""limits":{"max_body_bytes":10}"#, "limits.max_body_bytes"),
            (#""limits":{"threads":-1}"#, "limits.threads"),
            (#""limits":{"speed":1}"#, "limits.speed"),
            (#""limits":{"ledger_connections":-1}"#, "limits.ledger_connections"),
            (#""limits":{"ledger_connections":"four"}"#, "limits.ledger_connections"),
            (#""limits":{"ledger_connections":1025}"#, "limits.ledger_connections"),
            (#""colour":"red""#, "colour"),
            (#""apple_notifications":{"bundle_ids":["com.example.game"]}"#, "apple_notifications.trust"),
            (#""apple_notifications":{"trust":["missing.pem"],"bundle_ids":["a"]}"#, "apple_notifications.trust[0]"),
            (#""apple_notifications":{"trust":["root.pem"]}"#, "apple_notifications.bundle_ids"),
            (
                #""apple_notifications":{"trust":["root.pem"],"bundle_ids":["a"],"app_apple_ids":["x"]}"#,
                "apple_notifications.app_apple_ids[0]"
            ),
            (
                #""apple_notifications":{"trust":["root.pem"],"bundle_ids":["a"],"colour":1}"#,
                "apple_notifications.colour"
            ),
        ])
    func invalidConfiguration(member: String, path: String) throws {
        let files = try Files()
        let key = String(member.dropFirst().prefix { $0 != "\"" })
        let members = Files.valid.filter { !$0.hasPrefix("\"\(key)\"") } + [member]
        #expect {
            try files.configuration(members)
        } throws: { error in
            (error as? ServiceConfigurationError)?.path == path
        }
    }

    @Test("an invalid catalog file is refused under its configuration key, with the catalog's own key path")
    func invalidCatalogFile() throws {
        let files = try Files()
        let members =
            Files.valid.filter { !$0.hasPrefix(#""catalogs""#) } + [#""catalogs":{"game":"bad-catalog.json"}"#]
        #expect {
            try files.configuration(members)
        } throws: { error in
            guard let error = error as? ServiceConfigurationError else { return false }
            return error.path == "catalogs.game"
                && error.rule.hasSuffix("bad-catalog.json: products[0].id: must be a string, found a number")
        }
    }

    @Test("intermediates are read in order, each file's certificates; without the key there are none")
    func intermediates() throws {
        let files = try Files()
        #expect(try files.configuration(Files.valid).intermediates.isEmpty)
        let configuration = try files.configuration(Files.valid + [#""intermediates":["intermediate.pem"]"#])
        #expect(configuration.intermediates.map(\.subject) == [ServiceFixture.chain.intermediate.subject])
    }

    @Test(
        "an intermediate that is no certificate authority, or a root, is refused naming the file and why",
        arguments: [
            ("signer.pem", "is not a certificate authority"), ("root.pem", "is a root (self-signed): list it in trust"),
            ("catalog.json", "catalog.json: "), ("missing.pem", "cannot read"),
        ])
    func badIntermediate(file: String, rule: String) throws {
        let files = try Files()
        #expect {
            try files.configuration(Files.valid + [#""intermediates":["\#(file)"]"#])
        } throws: { error in
            guard let error = error as? ServiceConfigurationError else { return false }
            return error.path == "intermediates[0]" && error.rule.contains(file) && error.rule.contains(rule)
        }
    }

    @Test("a missing required key is refused naming it", arguments: ["environment", "ledger", "trust"])
    func missingKey(key: String) throws {
        let files = try Files()
        #expect {
            try files.configuration(Files.valid.filter { !$0.hasPrefix("\"\(key)\"") })
        } throws: { error in
            (error as? ServiceConfigurationError)?.path == key
        }
    }

    @Test("apple_notifications is read with its anchors, apps and Apple IDs")
    func appleNotifications() throws {
        let files = try Files()
        let configuration = try files.configuration(
            Files.valid + [
                #""apple_notifications":{"trust":["root.pem"],"bundle_ids":["com.example.game"],"app_apple_ids":[1234567890]}"#
            ])
        let settings = try #require(configuration.appleNotifications)
        #expect(settings.trustAnchors.count == 1)
        #expect(settings.bundleIDs == ["com.example.game"])
        #expect(settings.appAppleIDs == [1_234_567_890])
    }

    @Test("apple_notifications in Production requires app_apple_ids, as Apple's library does; Sandbox does not")
    func appAppleIDsRequiredInProduction() throws {
        let files = try Files()
        let settings = #""apple_notifications":{"trust":["root.pem"],"bundle_ids":["com.example.game"]}"#
        #expect(try files.configuration(Files.valid + [settings]).appleNotifications != nil)
        let production =
            Files.valid.filter { !$0.hasPrefix(#""environment""#) } + [
                #""environment":"Production""#, settings,
            ]
        #expect {
            try files.configuration(production)
        } throws: { error in
            (error as? ServiceConfigurationError)?.path == "apple_notifications.app_apple_ids"
        }
    }

    @Test("verify_requires_token without tokens is refused")
    func verifyTokenWithoutTokens() throws {
        let files = try Files()
        let members = Files.valid.filter { !$0.hasPrefix(#""tokens""#) } + [#""verify_requires_token":true"#]
        #expect(throws: ServiceConfigurationError.self) { try files.configuration(members) }
    }

    @Test(
        "a ledger that is a PostgreSQL URI is kept as it is, a path is resolved; ledger_connections defaults to the threads",
        arguments: [
            ("postgresql://app@db.example:5432/ledger?sslmode=require", true),
            ("postgres:///ledger?host=/run/postgresql", true),
            ("postgresql.sqlite", false),
        ])
    func ledgerLocation(ledger: String, isPostgreSQL: Bool) throws {
        let files = try Files()
        let members = Files.valid.filter { !$0.hasPrefix(#""ledger""#) } + [#""ledger":"\#(ledger)""#]
        let configuration = try files.configuration(members)
        #expect(configuration.ledgerPath == (isPostgreSQL ? ledger : files.directory.path + "/" + ledger))
        #expect(configuration.ledgerConnections == 0)
        #expect(configuration.effectiveLedgerConnections == 2, "limits.threads of the valid configuration")
        let sized = try files.configuration(
            members.filter { !$0.hasPrefix(#""limits""#) } + [#""limits":{"ledger_connections":9}"#])
        #expect(sized.effectiveLedgerConnections == 9)
    }

    @Test(
        "relative paths are resolved in the configuration file's directory, as NSString's parent path found it",
        arguments: [
            "serve.json", "./serve.json", "../serve.json", "config/serve.json", "/etc/receipt/serve.json",
            "/serve.json", "config//serve.json", "/etc//receipt///serve.json", "config/", "/", "", "a/b/c/",
        ])
    func configurationDirectory(path: String) {
        let expected = (path as NSString).deletingLastPathComponent
        #expect(ServiceConfiguration.directory(of: path) == (expected.isEmpty ? "." : expected))
    }
}
