// swift-tools-version:6.0
// libFuzzer targets, kept out of the root package so that its build and tests never see sanitizer flags.
// Build and run one with ./fuzz.sh TARGET [SECONDS].
import PackageDescription

let targets = [
    "FuzzDER", "FuzzPayload", "FuzzVerify", "FuzzParsers", "FuzzSigningRequest", "FuzzCatalog", "FuzzBase64",
    "FuzzLegacy", "FuzzJWS",
]

let package = Package(
    name: "FuzzTesting",
    dependencies: [.package(name: "openreceipt", path: "..")],
    targets: targets.map { name in
        .executableTarget(
            name: name,
            dependencies: [.product(name: "FuzzChecks", package: "openreceipt")],
            path: "Targets/\(name)"
        )
    }
)
