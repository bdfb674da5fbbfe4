// Whole-file images: a file mapped (its bytes the file's, alive while a copy of the owner lives),
// an empty file (nothing to map), and the refusals read_file_image makes alike: a missing file is
// NotFound, a folder InvalidArgument.
#include <gtest/gtest.h>

#include <fstream>

#include "kiln/io/file.h"
#include "support/model_builder.h"

namespace kiln::io {
namespace {

using kiln::testing::ScratchDir;

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

TEST(FileImage, MapsAFileWhoseBytesLiveAsLongAsTheOwner) {
  ScratchDir dir("file-image");
  std::string content(3 * 4096 + 17, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 1);
  write(dir.file("weights.bin"), content);
  std::shared_ptr<const char> kept;
  std::string_view bytes;
  {
    Result<FileImage> image = map_file_image(dir.file("weights.bin"));
    ASSERT_TRUE(image.is_ok()) << image.status().to_string();
    EXPECT_TRUE(image->mapped);
    EXPECT_EQ(image->bytes, content);
    kept = image->owner;
    bytes = image->bytes;
  }
  EXPECT_EQ(bytes, content) << "the mapping outlives the image while a copy of its owner lives";
  Result<FileImage> read = read_file_image(dir.file("weights.bin"));
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  EXPECT_FALSE(read->mapped);
  EXPECT_EQ(read->bytes, content);
}

TEST(FileImage, AnEmptyFileHasNoBytesAndNothingMapped) {
  ScratchDir dir("file-image");
  write(dir.file("empty.bin"), "");
  Result<FileImage> image = map_file_image(dir.file("empty.bin"));
  ASSERT_TRUE(image.is_ok()) << image.status().to_string();
  EXPECT_TRUE(image->bytes.empty());
  EXPECT_FALSE(image->mapped);
}

TEST(FileImage, RefusesAMissingFileAndAFolderAsReadingDoes) {
  ScratchDir dir("file-image");
  for (auto image_of : {map_file_image, read_file_image}) {
    Result<FileImage> missing = image_of(dir.file("absent.gguf"));
    ASSERT_FALSE(missing.is_ok());
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_NE(missing.status().message().find("absent.gguf"), std::string::npos) << missing.status().message();
    Result<FileImage> folder = image_of(dir.path().string());
    ASSERT_FALSE(folder.is_ok());
    EXPECT_EQ(folder.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace kiln::io
