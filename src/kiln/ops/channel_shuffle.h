// kiln.ChannelShuffle's data movement, shared by its reference kernel and the cpu provider's:
// ShuffleNet's channel shuffle (Reshape [N, g, C/g, ...] -> Transpose of axes 1 and 2 -> Reshape
// [N, C, ...], which channel_shuffle_fusion replaces by one kiln.ChannelShuffle), so output
// channel j * g + i is input channel i * (C / g) + j. Written once.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

namespace channel_shuffle_detail {

// Channels-last (one element per channel and position): the channel permutation per position.
template <class W>
void shuffle_last_axis(const W* x, W* y, int64_t outer, int64_t channels, int64_t groups, bool parallel) {
  const int64_t per_group = channels / groups;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t o = 0; o < outer; ++o) {
    const W* xo = x + o * channels;
    W* yo = y + o * channels;
    for (int64_t i = 0; i < groups; ++i)
      for (int64_t j = 0; j < per_group; ++j) yo[j * groups + i] = xo[i * per_group + j];
  }
}

}  // namespace channel_shuffle_detail

// x and y viewed as [outer, channels, inner] elements of `element_size` bytes; threaded over whole
// channel planes, or over positions when the channels are the last axis, when `parallel`.
inline void shuffle_channels(const void* x, void* y, int64_t outer, int64_t channels, int64_t inner, int64_t groups,
                             size_t element_size, bool parallel) {
  using channel_shuffle_detail::shuffle_last_axis;
  if (inner == 1) {
    switch (element_size) {
      case 1: return shuffle_last_axis(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), outer, channels, groups, parallel);
      case 2: return shuffle_last_axis(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), outer, channels, groups, parallel);
      case 4: return shuffle_last_axis(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), outer, channels, groups, parallel);
      case 8: return shuffle_last_axis(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), outer, channels, groups, parallel);
      default: break;
    }
  }
  const int64_t per_group = channels / groups;
  const auto run = inner * static_cast<int64_t>(element_size);
  const auto* in = static_cast<const uint8_t*>(x);
  auto* out = static_cast<uint8_t*>(y);
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t from = (c % groups) * per_group + c / groups;
      std::memcpy(out + (o * channels + c) * run, in + (o * channels + from) * run, static_cast<size_t>(run));
    }
}

// A node's shuffle over a tensor of `dims`: [outer, channels, inner] around the channel axis its
// `layout` names, and its `groups`; InvalidModel naming the node when the layout is unknown, the
// rank below 2 or the groups do not divide the channels.
struct ChannelShuffleView {
  int64_t outer = 1, channels = 1, inner = 1, groups = 1;
};
Result<ChannelShuffleView> channel_shuffle_view(const ir::Node& node, const std::vector<int64_t>& dims);

}  // namespace kiln::ops
