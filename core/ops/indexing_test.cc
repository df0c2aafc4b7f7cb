// Tests for the indexing ops (index_select, gather, scatter*, embedding, index.Tensor,
// index_put): hand-computed values, duplicates, NaN, integer wrapping and bad indices.
#include <cmath>
#include <limits>

#include "core/ops/shape_test_util.h"

namespace plugsdk::ops::testing {
namespace {

constexpr DType F32 = DType::kF32, F64 = DType::kF64, I64 = DType::kI64, I32 = DType::kI32, I16 = DType::kI16,
                I8 = DType::kI8, B = DType::kBool;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(IndexSelect, ValuesAndErrors) {
  HostTensor x = iota(F64, {3, 2});
  HostTensor i = I(I64, {2}, {2, 0});
  expectValues(run1("aten.index_select", {&x, &i}, {{"dim", A(0)}}), F64, {2, 2}, {4, 5, 0, 1});
  HostTensor j = I(I32, {1}, {1});
  expectValues(run1("aten.index_select", {&x, &j}, {{"dim", A(-1)}}), F64, {3, 1}, {1, 3, 5});
  HostTensor k = I(I64, {}, {1});
  expectValues(run1("aten.index_select", {&x, &k}, {{"dim", A(0)}}), F64, {1, 2}, {2, 3});
  HostTensor none(I64, {0});
  expectValues(run1("aten.index_select", {&x, &none}, {{"dim", A(1)}}), F64, {3, 0}, {});

  HostTensor neg = I(I64, {1}, {-1}), big = I(I64, {2}, {0, 3});
  EXPECT_CONTAINS(runError("aten.index_select", {&x, &neg}, {{"dim", A(0)}}),
                  "index -1 is out of bounds for dimension 0 with size 3");
  EXPECT_CONTAINS(runError("aten.index_select", {&x, &big}, {{"dim", A(0)}}), "index 3 is out of bounds");
  HostTensor i16 = I(I16, {1}, {0}), m = I(I64, {1, 1}, {0});
  EXPECT_CONTAINS(runError("aten.index_select", {&x, &i16}, {{"dim", A(0)}}), "int32 or int64");
  EXPECT_CONTAINS(runError("aten.index_select", {&x, &m}, {{"dim", A(0)}}), "must be a vector");
  EXPECT_CONTAINS(runError("aten.index_select", {&x, &i}, {{"dim", A(2)}}), "out of range");
}

TEST(Gather, ValuesAndErrors) {
  HostTensor x = iota(I64, {2, 3});
  HostTensor i = I(I64, {2, 2}, {2, 0, 1, 1});
  expectInts(run1("aten.gather", {&x, &i}, {{"dim", A(1)}}), I64, {2, 2}, {2, 0, 4, 4});
  HostTensor j = I(I64, {1, 3}, {1, 0, 1});
  expectInts(run1("aten.gather", {&x, &j}, {{"dim", A(0)}}), I64, {1, 3}, {3, 1, 5});
  HostTensor v = iota(F32, {3}), z = I(I64, {}, {2});
  expectValues(run1("aten.gather", {&v, &z}, {{"dim", A(0)}}), F32, {}, {2});
  HostTensor empty(I64, {0, 2});
  expectValues(run1("aten.gather", {&v, &empty}, {{"dim", A(0)}}), F32, {0, 2}, {});

  HostTensor i32 = I(I32, {2, 2}, {0, 0, 0, 0});
  EXPECT_CONTAINS(runError("aten.gather", {&x, &i32}, {{"dim", A(1)}}), "index must be int64");
  HostTensor flat = I(I64, {2}, {0, 0});
  EXPECT_CONTAINS(runError("aten.gather", {&x, &flat}, {{"dim", A(1)}}), "same number of dimensions");
  HostTensor tall = I(I64, {3, 1}, {0, 0, 0});
  EXPECT_CONTAINS(runError("aten.gather", {&x, &tall}, {{"dim", A(1)}}), "must be no larger than self");
  HostTensor oob = I(I64, {1, 1}, {3});
  EXPECT_CONTAINS(runError("aten.gather", {&x, &oob}, {{"dim", A(1)}}),
                  "index 3 is out of bounds for dimension 1 with size 3");
  HostTensor neg = I(I64, {1, 1}, {-1});
  EXPECT_CONTAINS(runError("aten.gather", {&x, &neg}, {{"dim", A(1)}}), "index -1 is out of bounds");
}

TEST(Scatter, SrcValueAndAdd) {
  HostTensor self(F32, {2, 3});
  HostTensor idx = I(I64, {1, 2}, {2, 0});
  HostTensor src = D(F32, {2, 3}, {7, 8, 9, 10, 11, 12});
  expectValues(run1("aten.scatter.src", {&self, &idx, &src}, {{"dim", A(1)}}), F32, {2, 3}, {8, 0, 7, 0, 0, 0});
  HostTensor dup = I(I64, {1, 2}, {1, 1});
  // Duplicates: the last write in row-major order wins (PyTorch's CPU order).
  expectValues(run1("aten.scatter.src", {&self, &dup, &src}, {{"dim", A(1)}}), F32, {2, 3}, {0, 8, 0, 0, 0, 0});
  expectValues(run1("aten.scatter_add", {&self, &dup, &src}, {{"dim", A(1)}}), F32, {2, 3}, {0, 15, 0, 0, 0, 0});
  HostTensor col = I(I64, {2, 1}, {1, 0});
  expectValues(run1("aten.scatter.src", {&self, &col, &src}, {{"dim", A(0)}}), F32, {2, 3}, {10, 0, 0, 7, 0, 0});

  HostTensor si(I64, {3});
  HostTensor one = I(I64, {1}, {1});
  expectInts(run1("aten.scatter.value", {&si, &one}, {{"dim", A(0)}, {"value", Af(2.7)}}), I64, {3}, {0, 2, 0});
  HostTensor u8 = I(DType::kU8, {2}, {0, 0}), zero = I(I64, {1}, {0});
  expectInts(run1("aten.scatter.value", {&u8, &zero}, {{"dim", A(0)}, {"value", A(-1)}}), DType::kU8, {2}, {255, 0});
  EXPECT_CONTAINS(runError("aten.scatter.value", {&u8, &zero}, {{"dim", A(0)}, {"value", A(300)}}), "without overflow");
  HostTensor s8 = I(I8, {2}, {120, 0}), two = I(I64, {2}, {0, 0}), five = I(I8, {2}, {5, 5});
  expectInts(run1("aten.scatter_add", {&s8, &two, &five}, {{"dim", A(0)}}), I8, {2}, {-126, 0});
  HostTensor mul = D(F32, {3}, {2, 2, 7});
  HostTensor mi = I(I64, {4}, {0, 0, 1, 1}), ms = D(F32, {4}, {1, kNaN, 3, 4});
  expectValues(run1("aten.scatter.reduce", {&mul, &mi, &ms}, {{"dim", A(0)}, {"reduce", As("multiply")}}), F32, {3},
               {kNaN, 24, 7});
  expectValues(
      run1("aten.scatter.value_reduce", {&mul, &mi}, {{"dim", A(0)}, {"value", Af(2.0)}, {"reduce", As("add")}}), F32,
      {3}, {6, 6, 7});
}

TEST(Scatter, ScatterReduce) {
  HostTensor self = D(F32, {3}, {2, 2, 7});
  HostTensor idx = I(I64, {4}, {0, 0, 1, 1});
  HostTensor src = D(F32, {4}, {1, kNaN, 3, 4});
  auto reduce = [&](const char* how, bool includeSelf) {
    return run1("aten.scatter_reduce.two", {&self, &idx, &src},
                {{"dim", A(0)}, {"reduce", As(how)}, {"include_self", Ab(includeSelf)}});
  };
  expectValues(reduce("sum", true), F32, {3}, {kNaN, 9, 7});
  expectValues(reduce("prod", false), F32, {3}, {kNaN, 12, 7});
  expectValues(reduce("mean", true), F32, {3}, {kNaN, 3, 7});
  expectValues(reduce("mean", false), F32, {3}, {kNaN, 3.5, 7});
  expectValues(reduce("amax", true), F32, {3}, {kNaN, 4, 7});
  expectValues(reduce("amin", false), F32, {3}, {kNaN, 3, 7});

  HostTensor is = I(I64, {3}, {2, 2, 7}), isrc = I(I64, {4}, {-1, -4, 3, 4});
  expectInts(run1("aten.scatter_reduce.two", {&is, &idx, &isrc}, {{"dim", A(0)}, {"reduce", As("mean")}}), I64, {3},
             {-1, 3, 7});
  expectInts(run1("aten.scatter_reduce.two", {&is, &idx, &isrc},
                  {{"dim", A(0)}, {"reduce", As("mean")}, {"include_self", Ab(false)}}),
             I64, {3}, {-3, 3, 7});
  expectInts(run1("aten.scatter_reduce.two", {&is, &idx, &isrc},
                  {{"dim", A(0)}, {"reduce", As("amin")}, {"include_self", Ab(false)}}),
             I64, {3}, {-4, 3, 7});
  EXPECT_CONTAINS(runError("aten.scatter_reduce.two", {&self, &idx, &src}, {{"dim", A(0)}, {"reduce", As("max")}}),
                  "reduce must be one of");
}

TEST(Scatter, Errors) {
  HostTensor self(F32, {2, 3});
  HostTensor idx = I(I64, {1, 2}, {2, 0});
  HostTensor src64 = D(F64, {2, 3}, {});
  EXPECT_CONTAINS(runError("aten.scatter.src", {&self, &idx, &src64}, {{"dim", A(1)}}), "same dtype");
  HostTensor small = D(F32, {1, 1}, {1});
  EXPECT_CONTAINS(runError("aten.scatter.src", {&self, &idx, &small}, {{"dim", A(1)}}), "no larger than src");
  HostTensor wide = I(I64, {1, 4}, {0, 0, 0, 0});
  HostTensor src = D(F32, {2, 4}, {});
  EXPECT_CONTAINS(runError("aten.scatter.src", {&self, &wide, &src}, {{"dim", A(0)}}), "no larger than self");
  HostTensor oob = I(I64, {1, 1}, {3});
  EXPECT_CONTAINS(runError("aten.scatter_add", {&self, &oob, &self}, {{"dim", A(1)}}),
                  "index 3 is out of bounds for dimension 1");
  HostTensor i32 = I(I32, {1, 1}, {0});
  EXPECT_CONTAINS(runError("aten.scatter.value", {&self, &i32}, {{"dim", A(1)}, {"value", A(1)}}), "int64");
  EXPECT_CONTAINS(runError("aten.scatter.reduce", {&self, &idx, &self}, {{"dim", A(1)}, {"reduce", As("mean")}}),
                  "\"add\" or \"multiply\"");
}

TEST(Embedding, ValuesAndErrors) {
  HostTensor w = iota(F32, {3, 2});
  HostTensor i = I(I64, {1, 2}, {2, 0});
  expectValues(run1("aten.embedding", {&w, &i}), F32, {1, 2, 2}, {4, 5, 0, 1});
  HostTensor s = I(I32, {}, {1});
  expectValues(run1("aten.embedding", {&w, &s}, {{"padding_idx", A(1)}}), F32, {2}, {2, 3});
  HostTensor oob = I(I64, {1}, {3}), neg = I(I64, {1}, {-1});
  EXPECT_CONTAINS(runError("aten.embedding", {&w, &oob}), "index 3 out of range");
  EXPECT_CONTAINS(runError("aten.embedding", {&w, &neg}), "index -1 out of range");
  HostTensor v = iota(F32, {3}), f = D(F32, {1}, {0});
  EXPECT_CONTAINS(runError("aten.embedding", {&v, &i}), "weight must be 2-D");
  EXPECT_CONTAINS(runError("aten.embedding", {&w, &f}), "int32 or int64");
}

TEST(IndexTensor, AdvancedIndexingOnLeadingDims) {
  HostTensor x = iota(F64, {3, 4});
  HostTensor r = I(I64, {2, 1}, {0, 2}), c = I(I64, {3}, {1, 3, -1});
  expectValues(run1("aten.index.Tensor", {&x, &r, &c}), F64, {2, 3}, {1, 3, 3, 9, 11, 11});
  HostTensor rows = I(I32, {2}, {2, -3});
  expectValues(run1("aten.index.Tensor", {&x, &rows}), F64, {2, 4}, {8, 9, 10, 11, 0, 1, 2, 3});
  HostTensor empty(I64, {0});
  expectValues(run1("aten.index.Tensor", {&x, &empty}), F64, {0, 4}, {});

  HostTensor oob = I(I64, {1}, {3});
  EXPECT_CONTAINS(runError("aten.index.Tensor", {&x, &oob}), "index 3 is out of bounds for dimension 0 with size 3");
  HostTensor negOob = I(I64, {1}, {-5});
  EXPECT_CONTAINS(runError("aten.index.Tensor", {&x, &c, &negOob}),
                  "index -5 is out of bounds for dimension 1 with size 4");
  EXPECT_CONTAINS(runError("aten.index.Tensor", {&x, &c, &c, &c}), "too many indices for a tensor of rank 2 (got 3)");
  HostTensor mask = I(B, {3}, {1, 0, 1});
  EXPECT_CONTAINS(runError("aten.index.Tensor", {&x, &mask}), "mask");
  HostTensor two = I(I64, {2}, {0, 1});
  EXPECT_CONTAINS(runError("aten.index.Tensor", {&x, &two, &c}), "do not broadcast");
  EXPECT_CONTAINS(runError("aten.index.Tensor", {&x}), "at least one index");
}

TEST(IndexPut, WriteAccumulateAndBroadcast) {
  HostTensor x(F32, {5});
  HostTensor dup = I(I64, {2}, {1, 1});
  HostTensor v = D(F32, {2}, {1, 2});
  expectValues(run1("aten.index_put", {&x, &v, &dup}), F32, {5}, {0, 2, 0, 0, 0});
  expectValues(run1("aten.index_put", {&x, &v, &dup}, {{"accumulate", Ab(true)}}), F32, {5}, {0, 3, 0, 0, 0});
  HostTensor s = D(F32, {}, {-0.0}), neg = I(I32, {2}, {-1, 0});
  HostTensor ones = D(F32, {5}, {1, 1, 1, 1, 1});
  expectValues(run1("aten.index_put", {&ones, &s, &neg}), F32, {5}, {-0.0, 1, 1, 1, -0.0});

  HostTensor m(F64, {3, 2});
  HostTensor rows = I(I64, {2}, {2, 0}), row = D(F64, {2}, {7, kNaN});
  expectValues(run1("aten.index_put", {&m, &row, &rows}), F64, {3, 2}, {7, kNaN, 0, 0, 7, kNaN});
  HostTensor cols = I(I64, {2}, {1, 0}), pair = D(F64, {2}, {5, 6});
  expectValues(run1("aten.index_put", {&m, &pair, &rows, &cols}), F64, {3, 2}, {6, 0, 0, 0, 0, 5});

  HostTensor b = I(I8, {2}, {120, 0}), zz = I(I64, {2}, {0, 0}), five = I(I8, {2}, {5, 5});
  expectInts(run1("aten.index_put", {&b, &five, &zz}, {{"accumulate", Ab(true)}}), I8, {2}, {-126, 0});

  HostTensor v64 = D(F64, {2}, {1, 2});
  EXPECT_CONTAINS(runError("aten.index_put", {&x, &v64, &dup}), "values must have self's dtype f32");
  HostTensor three = D(F64, {3}, {1, 2, 3});
  EXPECT_CONTAINS(runError("aten.index_put", {&m, &three, &rows}),
                  "cannot be broadcast to the indexing result of shape [2, 2]");
  HostTensor oob = I(I64, {1}, {5});
  EXPECT_CONTAINS(runError("aten.index_put", {&x, &s, &oob}), "index 5 is out of bounds for dimension 0 with size 5");
}

TEST(Indexing, LargeTensorsAreFast) {
  HostTensor x = iota(F32, {256, 1024});
  HostTensor idx(I64, {256, 1024});
  for (int64_t i = 0; i < idx.numel(); ++i) idx.ints()[static_cast<size_t>(i)] = (i * 7) % 1024;
  HostTensor g = run1("aten.gather", {&x, &idx}, {{"dim", A(1)}});
  EXPECT_EQ(g.getDouble(1024 + 3), 1024 + (1027 * 7) % 1024);
  HostTensor s = run1("aten.scatter_add", {&x, &idx, &x}, {{"dim", A(1)}});
  EXPECT_EQ(s.shape(), x.shape());
  HostTensor rows(I64, {512});
  for (int64_t i = 0; i < 512; ++i) rows.ints()[static_cast<size_t>(i)] = 255 - i % 256;
  HostTensor r = run1("aten.index.Tensor", {&x, &rows});
  EXPECT_EQ(r.getDouble(1024 + 5), 254 * 1024 + 5);
  HostTensor p = run1("aten.index_put", {&x, &r, &rows}, {{"accumulate", Ab(true)}});
  EXPECT_EQ(p.getDouble(255 * 1024), 3 * 255 * 1024);
  HostTensor e = run1("aten.embedding", {&x, &rows});
  EXPECT_EQ(e.shape(), (std::vector<int64_t>{512, 1024}));
  HostTensor c = run1("aten.cat", {&x, &x}, {{"dim", A(1)}});
  EXPECT_EQ(c.getDouble(2048 + 1024), 1024);
}

}  // namespace
}  // namespace plugsdk::ops::testing
