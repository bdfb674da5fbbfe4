// `kiln keygen`, `kiln sign` and `kiln verify`: Ed25519 keys for .kiln artifacts, signing one, and
// checking one (structure, every hash, the signature, this machine's CPU features) with each check printed.
#include <iostream>

#include "kiln/artifact/container.h"
#include "kiln/artifact/loader.h"
#include "kiln/artifact/signing.h"
#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/io/file.h"
#include "kiln/target/target.h"

namespace kiln::cli {
namespace {

int run_keygen(const std::string& prefix) {
  auto keys = artifact::generate_key_pair();
  if (!keys.is_ok()) return report_error(keys.status());
  struct KeyFile {
    std::string path, bytes;
    unsigned mode;
  };
  for (const KeyFile& f : {KeyFile{prefix + ".sk", keys.value().secret_key, 0600}, KeyFile{prefix + ".pk", keys.value().public_key, 0644}}) {
    const Status written = io::write_file_atomic(f.path, f.bytes, f.mode);
    if (!written.is_ok()) return report_error(written);
    std::cout << "wrote " << f.path << "\n";
  }
  return 0;
}

int run_sign(const std::string& path, const std::string& key_path) {
  auto key = artifact::read_key_file(key_path, artifact::kSecretKeyBytes);
  if (!key.is_ok()) return report_error(key.status());
  auto file = io::read_file(path);
  if (!file.is_ok()) return report_error(file.status());
  auto signed_file = artifact::sign(file.value(), key.value());
  if (!signed_file.is_ok()) return report_error(signed_file.status().with_context(path));
  const Status written = io::write_file_atomic(path, signed_file.value());
  if (!written.is_ok()) return report_error(written);
  std::cout << "signed " << path << "\n";
  return 0;
}

struct VerifyArgs {
  std::string path, public_key_path, isa;
  bool require_signature = false;
};

// This machine's target (capped at `isa`), when it has the CPU features the artifact's kernels need.
Result<target::Target> check_machine(const artifact::Decoded& d, const std::string& isa) {
  KILN_ASSIGN_OR_RETURN(target::Target target, target::make_target(isa));
  KILN_RETURN_IF_ERROR(artifact::check_target(d.manifest, {std::nullopt, false, target.features, isa}));
  return target;
}

int run_verify(const VerifyArgs& args) {
  std::optional<std::string> trusted;
  if (!args.public_key_path.empty()) {
    auto key = artifact::read_key_file(args.public_key_path, artifact::kPublicKeyBytes);
    if (!key.is_ok()) return report_error(key.status());
    trusted = key.value();
  }
  auto file = io::read_file(args.path);
  if (!file.is_ok()) return report_error(file.status());
  auto decoded = artifact::decode(file.value());
  if (!decoded.is_ok()) {
    std::cout << "structure  FAILED\n";
    return report_error(decoded.status().with_context(args.path));
  }
  const artifact::Decoded& d = decoded.value();
  std::cout << "structure  ok: format version " << d.format_version << ", " << file.value().size() << " bytes\n"
            << "manifest   ok: sha256 " << d.manifest_sha256 << "\n";
  for (const nlohmann::json& s : d.manifest["sections"])
    std::cout << "section    ok: " << s["name"].get<std::string>() << ", " << s["size"] << " bytes, " << s["sha256"].size()
              << " SHA-256 chunk hash(es) match\n";
  auto signature = artifact::check_signature(d, trusted, args.require_signature);
  if (!signature.is_ok()) {
    std::cout << "signature  FAILED\n";
    return report_error(signature.status().with_context(args.path));
  }
  std::cout << "signature  ok: " << signature.value() << (trusted ? " (the given public key)" : "") << "\n";
  const Result<target::Target> target = check_machine(d, args.isa);
  if (!target.is_ok()) {
    std::cout << "target     FAILED\n";
    return report_error(target.status().with_context(args.path));
  }
  std::string features;
  for (const nlohmann::json& f : d.manifest["target"]["required_features"]) features += " " + f.get<std::string>();
  std::cout << "target     ok: this machine" << (args.isa.empty() ? "" : " (--isa " + args.isa + ")") << " has every CPU feature the kernels need:"
            << (features.empty() ? " (none)" : features) << "\n";
  // Layouts and kernels were chosen for the compiling target: say so when this one differs.
  const std::string compiled_for = d.manifest["target"].value("level", "");
  const std::string& here = target.value().level;
  if (!compiled_for.empty() && compiled_for != here)
    std::cout << "note       compiled for " << compiled_for << ", this target is " << here
              << ": its layouts and kernels were chosen for the other target (layouts the cpu provider runs no vector "
                 "kernel in here are refused at load, naming the node)\n";
  return 0;
}

}  // namespace

void add_artifact_commands(CLI::App& app, std::function<void(int)> set_exit) {
  auto prefix = std::make_shared<std::string>();
  CLI::App* keygen = app.add_subcommand("keygen", "Make an Ed25519 key pair for signing artifacts: PREFIX.sk and PREFIX.pk");
  keygen->add_option("--out", *prefix, "Path prefix of the two key files")->required();
  keygen->callback([prefix, set_exit] { set_exit(run_keygen(*prefix)); });

  auto sign_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* sign = app.add_subcommand("sign", "Sign a .kiln artifact in place (replacing any earlier signature)");
  sign->add_option("artifact", sign_args->first, ".kiln file")->required();
  sign->add_option("--key", sign_args->second, "Secret key file (kiln keygen)")->required();
  sign->callback([sign_args, set_exit] { set_exit(run_sign(sign_args->first, sign_args->second)); });

  auto verify_args = std::make_shared<VerifyArgs>();
  CLI::App* verify = app.add_subcommand("verify", "Check a .kiln artifact: structure, every hash, the signature");
  verify->add_option("artifact", verify_args->path, ".kiln file")->required();
  verify->add_option("--pubkey", verify_args->public_key_path, "Public key the artifact must be signed with");
  verify->add_flag("--require-signature", verify_args->require_signature, "Fail when the artifact is unsigned");
  add_isa_flag(*verify, verify_args->isa);
  verify->callback([verify_args, set_exit] { set_exit(run_verify(*verify_args)); });
}

}  // namespace kiln::cli
