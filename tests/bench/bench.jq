# jq workload of `make bench`: reshape, sort and group every row.
[.[] | {k: .name, s: (.vals | add), t: (.tags | to_entries | map(.key + "=" + (.value | tostring)) | join(","))}]
| group_by(.s) | map({s: .[0].s, n: length, names: (map(.k) | sort | join(" "))}) | length
