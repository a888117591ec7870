// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "openreceipt",
    products: [
        .library(name: "ReceiptDER", targets: ["ReceiptDER"]),
        .library(name: "StrictJSON", targets: ["StrictJSON"]),
        .library(name: "ReceiptModel", targets: ["ReceiptModel"]),
        .library(name: "ReceiptCrypto", targets: ["ReceiptCrypto"]),
        .library(name: "ReceiptCompression", targets: ["ReceiptCompression"]),
        .library(name: "ReceiptSigner", targets: ["ReceiptSigner"]),
        .library(name: "ReceiptVerifier", targets: ["ReceiptVerifier"]),
        .library(name: "ReceiptJWS", targets: ["ReceiptJWS"]),
        .library(name: "Entitlements", targets: ["Entitlements"]),
        .library(name: "ReceiptLedger", targets: ["ReceiptLedger"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "HTTPClient", targets: ["HTTPClient"]),
        .library(name: "ReceiptService", targets: ["ReceiptService"]),
        .library(name: "PurchaseVerifier", targets: ["PurchaseVerifier"]),
        .library(name: "FuzzChecks", targets: ["FuzzChecks"]),
        .library(name: "ReceiptBenchmark", targets: ["ReceiptBenchmark"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "LegacyReceipt", targets: ["LegacyReceipt"]),
        .library(name: "ZoneInfo", targets: ["ZoneInfo"]),
        .library(name: "Threads", targets: ["Threads"]),
        .executable(name: "receipt", targets: ["receipt"]),
    ],
    targets: [
        .systemLibrary(
            name: "CReceiptOpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CReceiptZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(name: "CReceiptMalloc"),
        // SQLite, libpq and libmicrohttpd are opened at their first use (dlopen), not linked: headers from Debian's
        // libsqlite3-dev, libpq-dev and libmicrohttpd-dev, libraries libsqlite3-0, libpq5 and libmicrohttpd12.
        .target(name: "CReceiptLibraryLoading"),
        .target(name: "CReceiptSQLite", dependencies: ["CReceiptLibraryLoading"]),
        .target(name: "CReceiptPostgreSQL", dependencies: ["CReceiptLibraryLoading"]),
        .target(name: "CReceiptMicroHTTPD", dependencies: ["CReceiptLibraryLoading"]),
        .target(name: "CReceiptShims", dependencies: ["CReceiptOpenSSL", "CReceiptZlib"]),
        .target(name: "CReceiptOpenSSLStart", dependencies: ["CReceiptOpenSSL"]),
        .target(name: "CReceiptSockets"),
        .target(name: "ReceiptCompression", dependencies: ["CReceiptShims", "CReceiptZlib"]),
        .target(name: "ReceiptDER"),
        .target(name: "StrictJSON"),
        .target(name: "ReceiptCMS", dependencies: ["ReceiptDER"]),
        .target(name: "ReceiptModel", dependencies: ["ReceiptDER", "StrictJSON", "ZoneInfo"]),
        .target(
            name: "ReceiptCrypto",
            dependencies: ["CReceiptOpenSSLStart", "CReceiptOpenSSL", "CReceiptShims", "ReceiptDER"]
        ),
        .target(
            name: "ReceiptSigner",
            dependencies: [
                "ReceiptCMS", "ReceiptCompression", "ReceiptCrypto", "ReceiptDER", "ReceiptModel", "StrictJSON",
            ]
        ),
        .target(
            name: "ReceiptVerifier",
            dependencies: ["ReceiptCMS", "ReceiptCompression", "ReceiptCrypto", "ReceiptDER", "ReceiptModel"]
        ),
        .target(
            name: "ReceiptBenchmark",
            dependencies: [
                "ReceiptCMS", "ReceiptCrypto", "ReceiptModel", "ReceiptSigner", "ReceiptVerifier", "StrictJSON",
                "Threads",
            ]
        ),
        .target(
            name: "Entitlements",
            dependencies: ["PurchaseVerifier", "ReceiptJWS", "ReceiptModel", "ReceiptVerifier", "StrictJSON"]
        ),
        .target(name: "ReceiptJWS", dependencies: ["ReceiptCrypto", "ReceiptDER", "ReceiptModel", "StrictJSON"]),
        .target(name: "PropertyList"),
        .target(name: "ZoneInfo"),
        .target(name: "CReceiptFileReading"),
        .target(name: "CReceiptThreadPlacement"),
        .target(name: "Threads", dependencies: ["CReceiptThreadPlacement"]),
        .target(
            name: "LegacyReceipt",
            dependencies: ["PropertyList", "ReceiptCrypto", "ReceiptDER", "ReceiptModel", "StrictJSON"]
        ),
        .target(
            name: "PurchaseVerifier",
            dependencies: [
                "LegacyReceipt", "ReceiptCrypto", "ReceiptDER", "ReceiptJWS", "ReceiptModel", "ReceiptVerifier",
                "StrictJSON",
            ]
        ),
        .target(
            name: "ReceiptLedger", dependencies: ["CReceiptPostgreSQL", "CReceiptSQLite", "ReceiptModel", "StrictJSON"]
        ),
        .target(name: "HTTPServer", dependencies: ["CReceiptMicroHTTPD", "CReceiptSockets", "Threads"]),
        .target(name: "HTTPClient", dependencies: ["CReceiptSockets"]),
        .target(
            name: "ReceiptService",
            dependencies: [
                "Entitlements", "HTTPClient", "HTTPServer", "LegacyReceipt", "PurchaseVerifier", "ReceiptCrypto",
                "ReceiptDER", "ReceiptJWS", "ReceiptLedger", "ReceiptModel", "ReceiptSigner", "ReceiptVerifier",
                "StrictJSON", "Threads", "ZoneInfo",
            ],
            resources: [
                .embedInCode("openapi.json"), .embedInCode("Console/index.html"),
                .embedInCode("Console/sign-in.html"), .embedInCode("Console/console.js"),
                .embedInCode("Console/console.css"),
            ]
        ),

        .target(
            name: "FuzzChecks",
            dependencies: [
                "Entitlements", "LegacyReceipt", "PropertyList", "ReceiptCrypto", "ReceiptDER", "ReceiptJWS",
                "ReceiptModel", "ReceiptSigner", "ReceiptVerifier", "StrictJSON",
            ],
            path: "FuzzTesting/Checks"
        ),
        .executableTarget(
            name: "receipt",
            dependencies: [
                "CReceiptFileReading", "CReceiptMalloc", "Entitlements", "HTTPServer", "PurchaseVerifier",
                "ReceiptBenchmark", "ReceiptCrypto", "ReceiptJWS", "ReceiptLedger", "ReceiptModel", "ReceiptService",
                "ReceiptSigner", "ReceiptVerifier", "StrictJSON", "Threads",
            ],
            // A release build of the command links the Swift runtime in (no toolchain needed where it is copied),
            // by the toolchain's lld with packed relative relocations (DT_RELR, which glibc 2.36 reads: 30,000
            // relative relocations in 6 KB instead of 716 KB): `receipt --version` took 2.4-2.7 ms from start to
            // end instead of 3.7-4.1 with the runtime's shared libraries (AMD EPYC). Only this executable's product
            // carries unsafe flags, so the libraries stay usable as other packages' dependencies. No dynamic
            // symbols of its own (--no-export-dynamic; swiftc exports every one, 4,499 here): the Swift runtime's
            // start looks up one of its functions with dladdr, which glibc answers by going through every symbol the
            // binary exports, and a run verifying 2 files took 0.27 ms less (AMD EPYC, 200 alternating pairs).
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                        "-Xlinker", "--no-export-dynamic",
                    ],
                    .when(configuration: .release))
            ]
        ),
        .testTarget(name: "ReceiptDERTests", dependencies: ["ReceiptDER"], resources: [.copy("Vectors")]),
        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON"]),
        .testTarget(name: "ReceiptModelTests", dependencies: ["ReceiptModel", "ReceiptDER", "StrictJSON", "ZoneInfo"]),
        .testTarget(
            name: "ReceiptVerifierTests",
            dependencies: [
                "ReceiptVerifier", "ReceiptSigner", "ReceiptCompression", "ReceiptCrypto", "ReceiptModel", "ReceiptCMS",
                "ReceiptDER",
                "StrictJSON",
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "EntitlementsTests",
            dependencies: [
                "Entitlements", "ReceiptCrypto", "ReceiptModel", "ReceiptSigner", "ReceiptVerifier", "StrictJSON",
            ]
        ),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzChecks"]),
        .testTarget(
            name: "ReceiptJWSTests",
            dependencies: ["ReceiptJWS", "ReceiptCrypto", "ReceiptDER", "ReceiptModel", "ReceiptSigner", "StrictJSON"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(name: "PropertyListTests", dependencies: ["PropertyList"]),
        .testTarget(name: "PurchaseVerifierTests", dependencies: ["PurchaseVerifier", "ReceiptCrypto", "StrictJSON"]),
        .testTarget(
            name: "LegacyReceiptTests",
            dependencies: [
                "LegacyReceipt", "PropertyList", "ReceiptCrypto", "ReceiptDER", "ReceiptModel", "StrictJSON",
            ],
            resources: [.copy("Vectors")]
        ),
        .target(name: "PostgreSQLTestSupport", path: "Tests/PostgreSQLTestSupport"),
        .target(name: "ThreadScheduling", path: "Tests/ThreadScheduling"),
        .testTarget(
            name: "ReceiptLedgerTests", dependencies: ["PostgreSQLTestSupport", "ReceiptLedger", "ReceiptModel"]
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["CReceiptThreadPlacement", "HTTPServer", "ThreadScheduling", "Threads"]
        ),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient"]),
        .testTarget(
            name: "ReceiptServiceTests",
            dependencies: [
                "HTTPServer", "PostgreSQLTestSupport", "ReceiptService", "receipt", "ReceiptCrypto", "ReceiptLedger",
                "Entitlements", "ReceiptJWS", "ReceiptModel", "ReceiptSigner", "ReceiptVerifier", "StrictJSON",
            ],
            exclude: ["Clients", "Vectors"]
        ),
        .testTarget(
            name: "ReceiptCLITests",
            dependencies: [
                "PostgreSQLTestSupport", "receipt", "PurchaseVerifier", "ReceiptCrypto", "ReceiptLedger",
                "ReceiptVerifier",
            ]
        ),
        .testTarget(name: "ZoneInfoTests", dependencies: ["ZoneInfo"], resources: [.copy("Vectors")]),
        .testTarget(name: "ThreadsTests", dependencies: ["Threads"]),
    ]
)
