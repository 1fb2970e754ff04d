#!/usr/bin/env bash
# URL rules learned from the content-seen test ([dust], `urlsieve crawl --dust off|learn|apply`)
# against a crawl without them, at the same page budget, on two sites:
#   - generated: DustSite's application (tools/site_server/dust_site.h: session ids, tracking
#     parameters, sort/view parameters, parameter order, path aliases, printable versions, an
#     endless calendar, forms), whose every response names the distinct page it is (X-Dust-Page,
#     read back from the WARC) and which says how many there are (/__dust/truth);
#   - gitweb: Debian's gitweb over a generated repository (bench/gen_git_repo.py; start_gitweb in
#     bench/lib.sh), a real application with no ground truth, skipped when gitweb is not
#     installed (scripts/setup.sh --bench). gitweb marks every page nofollow, so its crawls add
#     --ignore-nofollow (a crawl the site's owner asked for);
#   - mediawiki: Debian's MediaWiki over generated articles (bench/gen_wiki_pages.py;
#     start_mediawiki in bench/lib.sh), a real application whose articles are known: every
#     article has an edit form, a form per section, a history, an information page, a permanent
#     link, login and account forms through `returnto`, and red links to edit forms, which say
#     noindex; skipped when MediaWiki is not installed (scripts/setup.sh --bench).
# Each crawl: --max-pages N --threads 2 --delay-ms 0 --ignore-robots --warc --max-depth 1000, and
# --dust MODE when `urlsieve crawl --help` has the flag (without it, "off" is a plain crawl and
# the other modes are skipped). Per run (bench/dust_figures.py): requests (pages.jsonl lines),
# duplicate fetches (exact and near: duplicate_of, near_duplicate_of; "truth dup": fetches of a
# page an earlier fetch had, generated site only), distinct pages reached (generated: distinct
# X-Dust-Page ids, of the truth's count; gitweb: distinct payload digests; "firsts": pages
# with neither duplicate_of nor near_duplicate_of), URLs suppressed by a rule (rejected.jsonl
# "reason": "dust"), validation fetches (pages.jsonl "dust_check"), and "lost": distinct pages
# never fetched because of a rule (each suppressed URL fetched again after the crawl: its id on
# the generated site; on a web app, a page that is no fetched page's exact or near copy nor
# barren), less those still queued under another spelling when the budget ran out; on the wiki,
# wasted fetches (exact and near copies and barren pages: noindex or a 4xx) and articles reached
# (distinct article titles viewed, of those imported). Then, per site, apply against off and the
# issue's targets: duplicate fetches cut >= 50 %, distinct pages +25 % or more, lost <= 1 % of
# the distinct pages reached, validation fetches <= 2 % of the budget (PASS/MISS). A web app's
# suppressed URLs are many and its pages slow: a random sample of them is fetched again.
#
#   bench/dust.sh [--max-pages N] [--articles N] [--wiki-articles N] [--modes LIST]
#                 [--sites LIST] [--build-dir DIR] [--lost-sample N] [--keep]
#       --max-pages N   the page budget of every crawl (default 2000)
#       --articles N    the generated site's articles (default 1200: 1288 distinct pages, more
#                       than a crawl without rules reaches in 2000 fetches, fewer than the budget)
#       --wiki-articles N  the wiki's articles (default 3000: more than a crawl reaches in 2000
#                       fetches)
#       --modes LIST    --dust modes, comma-separated (default off,apply; learn also works)
#       --sites LIST    generated,gitweb,mediawiki (default all three)
#       --lost-sample N suppressed web app URLs fetched again to estimate the pages lost (default
#                       600)
#       --keep          keep the temp dir (crawl outputs, figures) and print its path
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

max_pages=2000
articles=1200
wiki_articles=3000
modes=off,apply
sites=generated,gitweb,mediawiki
build=build
keep=0
lost_sample=600
while (($#)); do
  case $1 in
    --max-pages) max_pages=$2; shift 2 ;;
    --articles) articles=$2; shift 2 ;;
    --wiki-articles) wiki_articles=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --sites) sites=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --lost-sample) lost_sample=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) print_help 45; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_positive --max-pages "$max_pages"
need_positive --articles "$articles"
need_positive --wiki-articles "$wiki_articles"
need_positive --lost-sample "$lost_sample"
[[ $modes =~ ^(off|learn|apply)(,(off|learn|apply))*$ ]] || {
  echo "--modes: a comma-separated list of off, learn, apply" >&2
  exit 2
}
[[ $sites =~ ^(generated|gitweb|mediawiki)(,(generated|gitweb|mediawiki))*$ ]] || {
  echo "--sites: a comma-separated list of generated, gitweb, mediawiki" >&2
  exit 2
}
urlsieve="$build/crawler/urlsieve"
site_bin="$build/tools/urlsieve-demo-site"
need_built "cmake --build $build --target urlsieve urlsieve-demo-site" "$urlsieve" "$site_bin"
command -v curl > /dev/null || { echo "missing curl: apt-get install -y curl" >&2; exit 1; }
make_tmp urlsieve_dust
on_exit cleanup_all

# Until the crawler has the flag, "off" is what every crawl does. (The help is read whole first:
# grep -q would stop reading it, and pipefail would see urlsieve's SIGPIPE.)
has_dust=0
help=$("$urlsieve" crawl --help)
if grep -q -- '--dust' <<< "$help"; then has_dust=1; fi
((has_dust)) || echo "note: $urlsieve crawl has no --dust: 'off' runs without it, other modes skipped"
echo "budget $max_pages pages; $(machine_load)"

# crawl_site NAME SEED SITE_KIND TRUTH LOST_SAMPLE [EXTRA CRAWL ARGS...] ("" for none): one crawl per
# mode, its figures in $tmp/NAME/MODE.json, then the table and the comparison with the targets.
crawl_site() {
  local name=$1 seed=$2 kind=$3 truth=$4 sample=$5 mode out start
  shift 5
  mkdir -p "$tmp/$name"
  echo "$seed" > "$tmp/$name/seeds.txt"
  local runs=()
  for mode in ${modes//,/ }; do
    local flag=()
    if ((has_dust)); then
      flag=(--dust "$mode")
    elif [[ $mode != off ]]; then
      continue
    fi
    out="$tmp/$name/out-$mode"
    start=$(now_ns)
    "$urlsieve" crawl --seeds "$tmp/$name/seeds.txt" --out "$out" --max-pages "$max_pages" \
      --threads 2 --delay-ms 0 --ignore-robots --warc --max-depth 1000 "${flag[@]}" "$@" \
      > /dev/null 2> "$out.err" || {
      cat "$out.err" >&2
      exit 1
    }
    echo "  $name --dust $mode: crawled in $(seconds_since "$start" 1) s" \
      "(then fetching the suppressed URLs again)"
    /usr/bin/python3 bench/dust_figures.py run "$out" --site "$kind" ${truth:+--truth "$truth"} \
      ${sample:+--lost-sample "$sample"} --urlsieve "$urlsieve" > "$tmp/$name/$mode.json"
    runs+=("$tmp/$name/$mode.json")
  done
  /usr/bin/python3 bench/dust_figures.py table "$name" "${runs[@]}"
  # learn fetches what off does (it only lists rules): only apply is held to the targets.
  if [[ -f $tmp/$name/off.json && -f $tmp/$name/apply.json ]]; then
    echo "  apply against off:"
    /usr/bin/python3 bench/dust_figures.py compare "$tmp/$name/off.json" "$tmp/$name/apply.json" \
      --max-pages "$max_pages"
  fi
}

if [[ ,$sites, == *,generated,* ]]; then
  echo
  echo "generated: DustSite's application, $articles articles"
  serve_site "$site_bin" "$tmp" --dust "$articles" --dust-kinds all
  truth=$(curl -sf "$base/__dust/truth" | sed -n 's/.*"distinct_pages": \([0-9]*\).*/\1/p')
  echo "  ground truth: $truth distinct pages"
  crawl_site generated "$base/" generated "$truth" ""
  stop_site_server
fi

if [[ ,$sites, == *,gitweb,* ]]; then
  echo
  if gitweb_installed; then
    echo "gitweb: Debian's gitweb over a generated repository"
    start_gitweb "$tmp/gitweb-server"
    crawl_site gitweb "$gitweb_base" webapp "" "$lost_sample" --ignore-nofollow
    stop_gitweb
  else
    echo "gitweb: skipped (gitweb or busybox not installed: scripts/setup.sh --bench)"
  fi
fi

if [[ ,$sites, == *,mediawiki,* ]]; then
  echo
  if mediawiki_installed; then
    echo "mediawiki: Debian's MediaWiki over $wiki_articles generated articles"
    start_mediawiki "$tmp/mediawiki-server" "$wiki_articles"
    crawl_site mediawiki "$mediawiki_base" wiki "$wiki_articles" "$lost_sample"
    stop_mediawiki
  else
    echo "mediawiki: skipped (mediawiki, php-cli or php-sqlite3 not installed:" \
      "scripts/setup.sh --bench)"
  fi
fi
