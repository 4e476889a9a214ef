# Shared by the cluster tests: a scratch folder holding the samples' inputs and a manifest of `jobs` jobs over
# every operator, and the expected outputs made by one unsharded batch. Sourced; needs $dmlgrad and $samples.
make_batch_folder() {
    local folder=$1 jobs=$2
    cp "$samples"/*.npy "$folder"/
    mkdir -p "$folder/expected" "$folder/out"
    local ops=(
        "relu-grad -x x.npy -g dy.npy"
        "relu-grad -x x_half.npy -g dy_half.npy"
        "clip-grad -x x.npy -g dy.npy --min -0.5 --max 0.5"
        "slice-grad -g dy_slice.npy --output-sizes 2,3,8,8 --input-window-offsets 0,0,0,0 --input-window-sizes 2,3,7,7 --input-window-strides 1,1,2,2"
        "maxpool-grad -x x_pool.npy -g dy_pool.npy --window-size 3,3 --strides 2,2 --start-padding 1,1 --end-padding 1,1"
        "resample-grad -g dy_resample.npy --output-sizes 1,2,8,8 --interpolation-mode linear --scales 1,1,2,2 --input-pixel-offsets 0,0,-0.5,-0.5 --output-pixel-offsets 0,0,0.5,0.5"
    )
    : >"$folder/jobs.txt"
    for ((i = 0; i < jobs; i++)); do
        echo "${ops[i % ${#ops[@]}]} --cpu -o out/o$i.npy" >>"$folder/jobs.txt"
    done
    sed 's| -o out/| -o expected/|' "$folder/jobs.txt" >"$folder/expected.txt"
    (cd "$folder" && "$dmlgrad" batch expected.txt -q)
}

# Every expected output has an identical output, and nothing else (no temporary file) is in out/.
expect_all_outputs() {
    local folder=$1 jobs=$2
    for ((i = 0; i < jobs; i++)); do
        cmp -s "$folder/expected/o$i.npy" "$folder/out/o$i.npy" || { echo "FAIL: out/o$i.npy differs or is missing"; return 1; }
    done
    local count
    count=$(ls -A "$folder/out" | wc -l)
    [[ $count -eq $jobs ]] || { echo "FAIL: $count entries in out/, expected $jobs: $(ls -A "$folder/out")"; return 1; }
}
