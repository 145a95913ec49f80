// How the ONNX importer keeps symbolic dims dynamic: shape computations on
// them fold into index values, reshapes and results are sized from them,
// and an op that cannot take them names the node and the pins to use.
// Each model comes from onnx-make-model.py.

// RUN: /usr/bin/python3 %S/onnx-make-model.py dynamic_flatten_matmul %t.fm.onnx
// RUN: strata-compile %t.fm.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=FM
// Shape -> Gather -> Unsqueeze -> Concat([n, -1]) -> Reshape: the -1 is the
// static 8 (the batch cancels), so the matmul's K stays static.
// FM:      func.func @main(%[[X:.+]]: tensor<?x4x2xf32> {strata.name = "x"}) -> (tensor<?x3xf32> {strata.name = "y"})
// FM:      %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<?x4x2xf32> into tensor<?x8xf32>
// FM:      tensor.dim %[[FLAT]], %{{.+}} : tensor<?x8xf32>
// FM:      %[[EMPTY:.+]] = tensor.empty(%{{.+}}) : tensor<?x3xf32>
// FM:      %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[EMPTY]] : tensor<?x3xf32>)
// FM:      linalg.matmul ins(%[[FLAT]], %{{.+}} : tensor<?x8xf32>, tensor<8x3xf32>) outs(%[[FILL]] : tensor<?x3xf32>)

// RUN: /usr/bin/python3 %S/onnx-make-model.py dynamic_range %t.rg.onnx
// RUN: strata-compile %t.rg.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=RG
// Range(0, ids.shape[1], 1): the count is computed from the dim at run
// time, each element from its index.
// RG:      %[[LEN:.+]] = tensor.dim %{{.+}}, %c1 : tensor<?x?xi64>
// RG:      %[[SPAN:.+]] = arith.subi %[[LEN]], %{{.+}} : index
// RG:      %[[COUNT:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// RG:      %[[EMPTY:.+]] = tensor.empty(%[[COUNT]]) : tensor<?xi64>
// RG:      linalg.generic {{.+}} outs(%[[EMPTY]] : tensor<?xi64>)
// RG:        linalg.index 0 : index

// RUN: /usr/bin/python3 %S/onnx-make-model.py dynamic_conv_height %t.cv.onnx
// RUN: strata-compile %t.cv.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=CV
// A window over a dynamic height: the output height, max(h - 3 + 1, 0) / 1,
// computed at run time; the static width planned here.
// CV:      func.func @main(%[[X:.+]]: tensor<?x1x?x4xf32> {strata.name = "x"}
// CV:      %[[N:.+]] = tensor.dim %[[X]], %c0
// CV:      %[[H:.+]] = tensor.dim %[[X]], %c2
// CV:      %[[SPAN:.+]] = arith.subi %[[H]], %c3
// CV:      %[[END:.+]] = arith.addi %[[SPAN]], %c1
// CV:      %[[FIT:.+]] = arith.maxsi %[[END]],
// CV:      %[[OH:.+]] = arith.divui %[[FIT]],
// CV:      %[[EMPTY:.+]] = tensor.empty(%[[N]], %[[OH]]) : tensor<?x1x?x2xf32>
// CV:      linalg.conv_2d_nchw_fchw {{.+}} ins(%[[X]], %{{.+}} : tensor<?x1x?x4xf32>, tensor<1x1x3x3xf32>)

// RUN: /usr/bin/python3 %S/onnx-make-model.py dynamic_unsupported %t.un.onnx
// RUN: not strata-compile %t.un.onnx -o %t.smod 2>&1 | FileCheck %s --check-prefix=UN
// UN: error: node 'rev' (ReverseSequence): dynamic dims (input 'x' is ?x2xf32) are not supported by this op yet; pin the dynamic dims when compiling: --dim=n=SIZE

// RUN: /usr/bin/python3 %S/onnx-make-model.py dynamic_gather_elements %t.ge.onnx
// RUN: strata-compile %t.ge.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=GE
// GatherElements over dynamic operands (axis 1): dim 0 of the indices is
// checked against the data's at the call (dim 1, the axis, may be longer),
// and the axis must not be empty unless the indices are; the result is
// sized from the indices and each element reads the data at its index,
// wrapped and clamped into the data's run-time dim 1.
// GE:      func.func @main(%[[DATA:.+]]: tensor<?x?xf32> {strata.name = "data"}, %[[INDICES:.+]]: tensor<?x?xi64> {strata.name = "indices"})
// GE:      %[[N:.+]] = tensor.dim %[[DATA]], %{{.+}} : tensor<?x?xf32>
// GE:      %[[W:.+]] = tensor.dim %[[DATA]], %{{.+}} : tensor<?x?xf32>
// GE:      %[[M:.+]] = tensor.dim %[[INDICES]], %{{.+}} : tensor<?x?xi64>
// GE:      %[[K:.+]] = tensor.dim %[[INDICES]], %{{.+}} : tensor<?x?xi64>
// GE:      %[[FITS:.+]] = arith.cmpi ule, %[[M]], %[[N]] : index
// GE-NEXT: cf.assert %[[FITS]], "GatherElements computing 'y': dim 0 of indices is larger than the data's"
// GE:      %[[AXIS_NONEMPTY:.+]] = arith.cmpi ne, %[[W]], %{{.+}} : index
// GE:      %[[NO_ROWS:.+]] = arith.cmpi eq, %[[M]], %{{.+}} : index
// GE:      %[[EITHER:.+]] = arith.ori %[[AXIS_NONEMPTY]], %[[NO_ROWS]] : i1
// GE:      %[[NO_COLS:.+]] = arith.cmpi eq, %[[K]], %{{.+}} : index
// GE:      %[[HOLDS:.+]] = arith.ori %[[EITHER]], %[[NO_COLS]] : i1
// GE-NEXT: cf.assert %[[HOLDS]], "GatherElements computing 'y': dim 1 of the data is empty but the indices are not"
// GE-NOT:  cf.assert
// GE:      %[[EMPTY:.+]] = tensor.empty(%[[M]], %[[K]]) : tensor<?x?xf32>
// GE:      linalg.generic {{.+}} ins(%[[INDICES]] : tensor<?x?xi64>) outs(%[[EMPTY]] : tensor<?x?xf32>)
// GE:        %[[ROW:.+]] = linalg.index 0 : index
// GE:        arith.addi %{{.+}}, %[[W]] : index
// GE:        %[[COL:.+]] = arith.minsi
// GE:        tensor.extract %[[DATA]][%[[ROW]], %[[COL]]] : tensor<?x?xf32>

// RUN: /usr/bin/python3 %S/onnx-make-model.py runtime_range %t.rr.onnx
// RUN: strata-compile %t.rr.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=RR
// Range over operands known only at run time: a rank-0 generic computes
// the length (-1 when invalid), the host reads it back and checks it, the
// range is sized with it, and the output declared [5] is a checked cast.
// RR:      %[[LENGTH:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<i64>)
// RR:        arith.divsi
// RR:      %[[N:.+]] = tensor.extract %[[LENGTH]][] : tensor<i64>
// RR:      %[[VALID:.+]] = arith.cmpi sge, %[[N]], %{{.+}} : i64
// RR:      cf.assert %[[VALID]], "Range computing 'r': delta is zero, an operand is not finite, or the result would have more than 2147483647 elements"
// RR:      %[[SIZE:.+]] = arith.index_cast %[[N]] : i64 to index
// RR:      %[[EMPTY:.+]] = tensor.empty(%[[SIZE]]) : tensor<?xi64>
// RR:      %[[RANGE:.+]] = linalg.generic {{.+}} outs(%[[EMPTY]] : tensor<?xi64>)
// RR:      %[[NEG:.+]] = linalg.generic {{.+}} ins(%[[RANGE]] : tensor<?xi64>)
// RR:      %[[DIM:.+]] = tensor.dim %[[NEG]], %{{.+}} : tensor<?xi64>
// RR:      %[[FITS:.+]] = arith.cmpi eq, %[[DIM]], %{{.+}} : index
// RR:      cf.assert %[[FITS]], "graph output 'y': dim 0 computed at run time is not the declared 5"
// RR:      %[[Y:.+]] = tensor.cast %[[NEG]] : tensor<?xi64> to tensor<5xi64>
// RR:      return %[[Y]] : tensor<5xi64>

// RUN: /usr/bin/python3 %S/onnx-make-model.py runtime_topk %t.tk.onnx
// RUN: strata-compile %t.tk.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=TK
// TopK with K given at run time and no declared size along the axis: K is
// read on the host, checked against the axis, and sizes both results.
// TK:      func.func @main(%{{.+}}: tensor<2x8xf32> {{.+}}, %[[KS:.+]]: tensor<1xi64> {{.+}}) -> (tensor<2x?xf32> {{.+}}, tensor<2x?xi64> {{.+}})
// TK:      %[[K:.+]] = tensor.extract %[[KS]][%{{.+}}] : tensor<1xi64>
// TK:      cf.assert %{{.+}}, "TopK computing 'values': K is not in [0, 8], the size of axis 1"
// TK:      %[[SIZE:.+]] = arith.index_cast %[[K]] : i64 to index
// TK:      tensor.empty(%[[SIZE]]) : tensor<2x?xf32>
// TK:      tensor.empty(%[[SIZE]]) : tensor<2x?xi64>

// RUN: /usr/bin/python3 %S/onnx-make-model.py runtime_pad %t.pd.onnx
// RUN: strata-compile %t.pd.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=PD
// Pad with pads given at run time over a dynamic input: each pad is read
// on the host and sizes the result (negative ones crop: max(0, ...)).
// PD:      func.func @main(%[[X:.+]]: tensor<?x4xf32> {{.+}}, %[[PADS:.+]]: tensor<4xi64> {{.+}}) -> (tensor<?x?xf32> {{.+}})
// PD:      %[[B0:.+]] = tensor.extract %[[PADS]][%{{.+}}] : tensor<4xi64>
// PD-NEXT: %[[LOW0:.+]] = arith.index_cast %[[B0]] : i64 to index
// PD-COUNT-3: tensor.extract %[[PADS]]
// PD:      %[[ROWS:.+]] = arith.maxsi
// PD:      %[[COLS:.+]] = arith.maxsi
// PD:      %[[EMPTY:.+]] = tensor.empty(%[[ROWS]], %[[COLS]]) : tensor<?x?xf32>
// PD:      linalg.generic {{.+}} outs(%[[EMPTY]] : tensor<?x?xf32>)
// PD:        arith.subi %{{.+}}, %[[LOW0]] : index

// RUN: /usr/bin/python3 %S/onnx-make-model.py dynamic_scatter_nd %t.sn.onnx
// RUN: strata-compile %t.sn.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=SN
// ScatterND over dynamic operands: the updates' dims are checked against
// the indices' at the call; one sequential region copies the data into the
// result and folds each update into the element its indices name.
// SN:      cf.assert %{{.+}}, "ScatterND computing 'y': dim 0 of updates and indices differ"
// SN:      cf.assert %{{.+}}, "ScatterND computing 'y': dim 1 of updates and indices differ"
// SN:      %[[INDICES:.+]] = tensor.expand_shape {{.+}} : tensor<?xi64> into tensor<?x2xi64>
// SN:      %[[UPDATES:.+]] = tensor.collapse_shape %arg2 {{.+}} into tensor<?xf32>
// SN:      scf.execute_region -> tensor<?x?xf32> no_inline {
// SN:        %[[EMPTY:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?xf32>
// SN:        %[[COPIED:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[EMPTY]])
// SN:          tensor.extract %arg0
// SN:          tensor.insert
// SN:        scf.for %[[P:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[COPIED]])
// SN:          tensor.extract %[[INDICES]][%[[P]], %{{.+}}] : tensor<?x2xi64>
// SN:          %[[ROW:.+]] = arith.minsi
// SN:          tensor.extract %[[INDICES]][%[[P]], %{{.+}}] : tensor<?x2xi64>
// SN:          %[[COL:.+]] = arith.minsi
// SN:          %[[U:.+]] = tensor.extract %[[UPDATES]][%[[P]]] : tensor<?xf32>
// SN:          tensor.insert %[[U]] into %[[ACC]][%[[ROW]], %[[COL]]] : tensor<?x?xf32>
