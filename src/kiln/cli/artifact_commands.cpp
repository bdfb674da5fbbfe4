// `kiln keygen`, `kiln sign` and `kiln verify`: Ed25519 keys for .kiln artifacts, signing one, and
// checking one (structure, every hash, the signature, this machine's CPU features) with each check printed.
#include <iostream>

#include "kiln/artifact/signing.h"
#include "kiln/report/report.h"
#include "kiln/artifact/verification.h"
#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/io/file.h"

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

int run_verify(const VerifyArgs& args) {
  std::optional<std::string> trusted;
  if (!args.public_key_path.empty()) {
    auto key = artifact::read_key_file(args.public_key_path, artifact::kPublicKeyBytes);
    if (!key.is_ok()) return report_error(key.status());
    trusted = key.value();
  }
  const artifact::ArtifactVerification v = artifact::verify_artifact(args.path, trusted, args.require_signature, args.isa);
  auto fail = [&v] {
    std::cout << v.failed_check << std::string(11 - v.failed_check.size(), ' ') << "FAILED\n";
    return report_error(v.failure);
  };
  if (v.failed_check == "structure") return fail();
  std::cout << "structure  ok: format version " << v.format_version << ", " << v.file_bytes << " bytes\n"
            << "manifest   ok: sha256 " << v.manifest_sha256 << "\n";
  for (const artifact::ArtifactVerification::Section& s : v.sections)
    std::cout << "section    ok: " << s.name << ", " << s.bytes << " bytes, " << s.hashed_chunks << " SHA-256 chunk hash(es) match\n";
  if (v.failed_check == "signature") return fail();
  std::cout << "signature  ok: " << v.signature << (trusted ? " (the given public key)" : "") << "\n";
  if (v.failed_check == "target") return fail();
  std::string features;
  for (const std::string& f : v.required_features) features += " " + f;
  std::cout << "target     ok: this machine" << (args.isa.empty() ? "" : " (--isa " + args.isa + ")") << " has every CPU feature the kernels need:"
            << (features.empty() ? " (none)" : features) << "\n";
  std::cout << "precision  " << report::precision_line(report::precision_from_json(v.precision)) << "\n";
  // Layouts and kernels were chosen for the compiling target: say so when this one differs.
  if (!v.compiled_for.empty() && v.compiled_for != v.target_level)
    std::cout << "note       compiled for " << v.compiled_for << ", this target is " << v.target_level
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
