// How the ONNX importer lowers ops whose import pattern is not a plain
// elementwise or named linalg op. Each model comes from onnx-make-model.py.

// RUN: /usr/bin/python3 %S/onnx-make-model.py conv_transpose %t.ct.onnx
// RUN: strata-compile %t.ct.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=CT
// ConvTranspose: the input spread by the strides into zeros (offset by
// K - 1 - pad), then one grouped generic reading the flipped kernel.
// CT-DAG:  #[[XMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d3 + -d6 + 2, d4 + -d7 + 2)>
// CT-DAG:  #[[WMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d2, d6, d7)>
// CT:      %[[SPREAD:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2] : tensor<1x2x3x3xf32> into tensor<1x2x7x7xf32>
// CT:      linalg.generic {indexing_maps = [#[[XMAP]], #[[WMAP]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[SPREAD]], %{{.+}} : tensor<1x2x7x7xf32>, tensor<2x1x1x3x3xf32>) outs(%{{.+}} : tensor<1x2x1x5x5xf32>)

// RUN: /usr/bin/python3 %S/onnx-make-model.py batch_norm_constant %t.bn.onnx
// RUN: strata-compile %t.bn.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=BN
// BatchNormalization with constant statistics: the per-channel factor
// scale / sqrt(var + eps) and shift bias - mean * factor are computed at
// import, and each element takes one multiply-add.
// BN-DAG:  %[[S:.+]] = arith.constant dense<[1.000000e+00, 4.000000e+00]> : tensor<2xf32>
// BN-DAG:  %[[T:.+]] = arith.constant dense<[5.000000e-01, 4.000000e+00]> : tensor<2xf32>
// BN:      linalg.generic
// BN-NEXT: ^bb0(%[[X:.+]]: f32, %[[F:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// BN-NEXT:   %[[M:.+]] = arith.mulf %[[X]], %[[F]] : f32
// BN-NEXT:   %[[A:.+]] = arith.addf %[[M]], %[[B]] : f32
// BN-NEXT:   linalg.yield %[[A]] : f32
// BN-NOT:  math.sqrt

// RUN: /usr/bin/python3 %S/onnx-make-model.py resize_nearest %t.rs.onnx
// RUN: strata-compile %t.rs.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=RS
// Resize with scales known only at run time: read in the body, source
// coordinate in f64 (half_pixel), round_prefer_floor, clamped.
// RS:      linalg.generic
// RS:      %[[S:.+]] = tensor.extract %arg1[%c2] : tensor<4xf32>
// RS:      arith.extf %[[S]] : f32 to f64
// RS:      math.floor %{{.+}} : f64
// RS:      arith.cmpf ogt, %{{.+}}, %cst{{.*}} : f64
// RS:      arith.minsi
// RS:      tensor.extract %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x1x2x2xf32>

// RUN: /usr/bin/python3 %S/onnx-make-model.py scatter_nd_add %t.sc.onnx
// RUN: strata-compile %t.sc.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=SC
// ScatterND as a gather: the result starts from a copy of the data (never
// the argument itself) and folds in every update whose index matches.
// SC:      %[[COPY:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<4x3xf32>)
// SC:      linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg2 : tensor<2x3xf32>) outs(%[[COPY]] : tensor<4x3xf32>)
// SC:      tensor.extract %arg1[%{{.+}}, %c0] : tensor<2x1xi64>
// SC:      %[[SUM:.+]] = arith.addf %out, %in : f32
// SC:      arith.select %{{.+}}, %[[SUM]], %out : f32

// RUN: /usr/bin/python3 %S/onnx-make-model.py einsum_batch_matmul %t.es.onnx
// RUN: strata-compile %t.es.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=ES
// ES-DAG:  #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// ES-DAG:  #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// ES-DAG:  #[[Y:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// ES:      linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}

// RUN: /usr/bin/python3 %S/onnx-make-model.py top_k %t.tk.onnx
// RUN: strata-compile %t.tk.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=TK
// TopK: each element's rank along the axis (larger first, lower index
// first among equals), then output position r takes the element of rank r.
// TK:      %[[RANKS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<3x6xi64>)
// TK:      linalg.generic {{.+}} ins(%arg0, %[[RANKS]] : tensor<3x6xf32>, tensor<3x6xi64>) outs(%{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<3x2xi64>)

// RUN: /usr/bin/python3 %S/onnx-make-model.py dropout_training %t.dr.onnx
// RUN: strata-compile %t.dr.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=DR
// Dropout with training_mode and ratio known at run time: each element
// draws from a counter-based generator (splitmix64 of its index: the
// shifts by 30, 27 and 31, then its top 24 bits), is kept (scaled) when the
// draw is at least the ratio, else zeroed; the run-time flag picks that or
// the input.
// DR:      linalg.generic {{.+}} ins(%arg0, %arg1, %arg2 : tensor<4xf32>, tensor<f32>, tensor<i1>)
// DR:        %[[I:.+]] = linalg.index 0
// DR:        arith.shrui %{{.+}}, %c30_i64
// DR:        arith.shrui %{{.+}}, %c27_i64
// DR:        arith.shrui %{{.+}}, %c31_i64
// DR:        arith.shrui %{{.+}}, %c40_i64
// DR:        %[[KEPT:.+]] = arith.cmpf oge, %{{.+}}, %in_0 : f32
// DR:        %[[DROPPED:.+]] = arith.select %[[KEPT]], %{{.+}}, %{{.+}} : f32
// DR:        arith.select %in_1, %[[DROPPED]], %in : f32

// RUN: /usr/bin/python3 %S/onnx-make-model.py if_runtime %t.if.onnx
// RUN: strata-compile %t.if.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=IF
// If with a run-time condition: a conditional, each branch (reading the
// outer x) in its region; only the taken one runs.
// IF:      %[[C:.+]] = tensor.extract %arg0[] : tensor<i1>
// IF:      %[[R:.+]] = scf.if %[[C]] -> (tensor<4xf32>) {
// IF:        linalg.generic {{.+}} ins(%arg1, %arg1 : tensor<4xf32>, tensor<4xf32>)
// IF:          arith.addf
// IF:        scf.yield
// IF:      } else {
// IF:        linalg.generic {{.+}} ins(%arg1, %arg1 : tensor<4xf32>, tensor<4xf32>)
// IF:          arith.mulf
// IF:        scf.yield
// IF:      return %[[R]]
// The host program reads the condition back and calls the function made of
// the branch it picks, with buffer views; the VM branches on it.
// RUN: strata-compile %t.if.onnx --dump-after=host -o %t.smod | FileCheck %s --check-prefix=IF-HOST
// IF-HOST-LABEL: func.func @main(
// IF-HOST:         %[[COND:.+]] = hal.buffer.load
// IF-HOST:         %[[BIT:.+]] = arith.trunci %[[COND]] : i64 to i1
// IF-HOST:         cf.cond_br %[[BIT]], ^[[THEN:.+]], ^[[ELSE:[^ ]+]]
// IF-HOST:       ^[[THEN]]:
// IF-HOST:         %[[X:.+]] = hal.buffer_view.create
// IF-HOST:         %[[T:.+]] = call @main_then(%[[X]]) : (!hal.buffer_view) -> !hal.buffer_view
// IF-HOST:         cf.br ^[[JOIN:[^(]+]](%[[T]] : !hal.buffer_view)
// IF-HOST:       ^[[ELSE]]:
// IF-HOST:         %[[X2:.+]] = hal.buffer_view.create
// IF-HOST:         %[[E:.+]] = call @main_else(%[[X2]]) : (!hal.buffer_view) -> !hal.buffer_view
// IF-HOST:         cf.br ^[[JOIN]](%[[E]] : !hal.buffer_view)
// IF-HOST:       ^[[JOIN]](%[[Y:.+]]: !hal.buffer_view):
// IF-HOST:         hal.buffer_view.buffer %[[Y]]
// IF-HOST:       func.func private @main_else(%{{.+}}: !hal.buffer_view) -> !hal.buffer_view
// IF-HOST:         hal.buffer_view.assert
// IF-HOST:         hal.command_buffer.dispatch
// IF-HOST:       func.func private @main_then(
// RUN: strata-compile %t.if.onnx --dump-after=vm -o %t.smod | FileCheck %s --check-prefix=IF-VM
// IF-VM:         vm.func @main(
// IF-VM:           cond_br %{{.+}}, ^[[THEN:.+]], ^
// IF-VM:         ^[[THEN]]:
// IF-VM:           call @main_then(%{{.+}}) : (!vm.ref<!hal.buffer_view>) -> !vm.ref<!hal.buffer_view>
// IF-VM:         vm.func @main_else({{.+}}) -> !vm.ref<!hal.buffer_view> attributes {strata.abi.arguments

// RUN: /usr/bin/python3 %S/onnx-make-model.py scan_reverse %t.scan.onnx
// RUN: strata-compile %t.scan.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=SCAN
// Scan unrolled over the 3 rows, last row first; partial sums stacked.
// SCAN:    tensor.extract_slice %arg1[2, 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// SCAN:    arith.addf
// SCAN:    tensor.extract_slice %arg1[1, 0] [1, 2] [1, 1]
// SCAN:    tensor.extract_slice %arg1[0, 0] [1, 2] [1, 1]
// SCAN:    %[[P:.+]] = tensor.concat dim(0) {{.+}} -> tensor<3x2xf32>
// SCAN:    return %{{.+}}, %[[P]]

// RUN: /usr/bin/python3 %S/onnx-make-model.py loop_unbounded %t.loop.onnx
// RUN: not strata-compile %t.loop.onnx -o %t.smod 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP:    error: node 'loop' (Loop): the number of iterations must be known at compile time

// RUN: /usr/bin/python3 %S/onnx-make-model.py nms %t.nms.onnx
// RUN: strata-compile %t.nms.onnx --dump-after=import -o %t.smod | FileCheck %s --check-prefix=NMS
// RUN: strata-compile %t.nms.onnx --dump-after=dispatch-regions -o %t.smod | FileCheck %s --check-prefix=NMSD
// NonMaxSuppression: batch, class and step loops in a sequential region.
// NMS:     scf.execute_region -> tensor<4x3xi64> no_inline
// NMS:     scf.for {{.+}} -> (tensor<4x3xi64>, tensor<6xi8>, i64)
// NMS:     tensor.extract %arg1[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x2x6xf32>
// NMSD:    flow.dispatch.region -> (tensor<4x3xi64>)
// NMSD:    scf.execute_region -> tensor<4x3xi64> no_inline
// NMSD-NOT: flow.dispatch.region
