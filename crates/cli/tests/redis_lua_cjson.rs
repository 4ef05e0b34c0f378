//! Lua's `cjson` library over the wire: the same `EVAL` scripts go to a real `redis-server`
//! and to `docdb serve`, and every reply must be identical (errors as whole replies, the
//! script's SHA-1 and line included).
//!
//! Scripts that change settings use `cjson.new()`, whose settings are its own: the global
//! `cjson` keeps Redis's defaults for the scripts after them. Objects with several keys are
//! compared after a round trip or key by key, since their order is Lua's table order.

mod common_redis;

use common_redis::eval_lockstep as lockstep;

#[test]
fn encode_matches_redis() {
    lockstep(&[
        "return cjson.encode({1,2,3})",
        "return cjson.encode(nil)",
        "return cjson.encode(true)",
        "return cjson.encode({true, false, cjson.null})",
        "return cjson.encode('plain')",
        "return cjson.encode({'a/b', '\"q\"', 'back\\\\slash', \
         '\\1\\2\\8\\9\\10\\11\\12\\13\\14\\31\\127\\128\\255', 'é'})",
        "return cjson.encode('a\\0b')",
        "return cjson.encode({['a\\0']=1})",
        "return cjson.encode({1e15, 1e16, 123456789012345, 0.1+0.2, 100, -0.000001, 0.0001, \
         0.00001, 1e21, 2^63, 5e-324, 1.7976931348623157e308, 99999999999999.5, 0.5e-4})",
        "return cjson.encode({1e-300, 0.1, 1/3, 123456789012345678, -1.5e100, -7, 3.25})",
        "local z=0 return cjson.encode({-z, 1e-20, -1e-300, {[1e-20]=1}})",
        "local z=0 return cjson.encode({[-z]=1})",
        "return cjson.encode(42)",
        "return cjson.encode(-0.5)",
        "return cjson.encode({[1]=1,[2]=2,[4]=4})",
        "return cjson.encode({[10]=1})",
        "return cjson.encode({[0]=1})",
        "return cjson.encode({[-1]=1})",
        "return cjson.encode({[1.5]=1})",
        "return cjson.encode({[1e300]=1})",
        "return cjson.encode({[2^31]=1})",
        "return cjson.encode({[2^31]=1, [1]=2})",
        "return cjson.encode({[2^53]=1})",
        "return cjson.encode({})",
        "return cjson.encode({{}, {{}}, {a={}}})",
        "return cjson.encode({a={b={c={}}}})",
        "return cjson.encode({key='value'})",
        "return cjson.encode({[1]=1, n=2}) == '{\"1\":1,\"n\":2}' or \
         cjson.encode({[1]=1, n=2}) == '{\"n\":2,\"1\":1}'",
        "return cjson.encode(setmetatable({}, {__index=function() return 1 end}))",
        "local t={} local c=t for i=1,999 do c[1]={} c=c[1] end return #cjson.encode(t)",
        "return cjson.encode(string.rep('x', 100000)) == '\"' .. string.rep('x', 100000) .. '\"'",
        "local t = {} for i = 1, 1000 do t[i] = i * 1.5 end return #cjson.encode(t)",
        // Round trips compare objects whatever their key order.
        "local t = cjson.decode(cjson.encode({a=1, b='x', c={1,2}, d={e=false}})) \
         return {t.a, t.b, t.c[2], tostring(t.d.e)}",
    ]);
}

#[test]
fn decode_matches_redis() {
    lockstep(&[
        "return cjson.decode('[1,\"a\",true,null,[2]]')",
        "return cjson.decode('\"text\"')",
        "return cjson.decode('12')",
        "return cjson.decode('-3.7')",
        "return cjson.decode(123)",
        "return cjson.decode('true')",
        "return cjson.decode('false')",
        "return cjson.decode('+1')",
        "return cjson.decode('[1]\\0garbage')",
        "return cjson.encode(cjson.decode('  {\"k\" : [ 1 , \"x\" , true , null , -2.5e3 ] }  '))",
        "return cjson.encode(cjson.decode('\"\\\\u00e9\\\\u20ac\\\\ud83d\\\\ude00\\\\u0000x\\\\/\
         \\\\b\\\\f\\\\n\\\\r\\\\t\"'))",
        "return cjson.decode('\"\\\\uD83D\\\\uDE00\"')",
        "return cjson.decode('\"\\t\"')",
        "local c=cjson.new() c.encode_invalid_numbers(true) return c.encode(c.decode(\
         '[+1, -0x10, 0x1p4, Infinity, -inf, 1e400, 01, 1., -.5, 0x.8, 1.e5, 0x1P-2, 0X1f, \
         4.9e-324, 2.2250738585072011e-308, 0x1.fffffffffffff8p1023, 0x0.0000000000001p-1022, \
         123456789012345678901234567890]'))",
        "local c=cjson.new() c.encode_invalid_numbers(true) \
         return c.encode(c.decode('[NaN, nan(123), -nan, infinity, 0x1.8p1]'))",
        "local c=cjson.new() c.decode_invalid_numbers(false) \
         return c.encode(c.decode('[0, -0, 0.5, -1e5]'))",
        "return string.format('%.17g %.17g %.17g', cjson.decode('0x1.00000000000008p0'), \
         cjson.decode('0x1.00000000000018p0'), cjson.decode('2.4703282292062328e-324'))",
        "local t = {'1', '0x1.8p1', '1e400', '-1e-400', '4.9e-324', '2.4703282292062327e-324', \
         '0x1.000000000000080000001p0', '123456789012345678901234567890e-10', '0.1', '1e23', \
         '9007199254740993', '0x1fffffffffffff1', '0x.0000000000000000000000000001p0', \
         '0x1p-1075', '0x1.8p-1074', '1e-99999999999999999999', '1e99999999999999999999', \
         '0X10', '-.5e1', '00012', '0x1.fffffffffffff7ffp1023', '0x0.fffffffffffff8p-1022', \
         '-0', '+0x1p-3', '-infinity', 'InFiNiTy'} local out = {} for i, s in ipairs(t) do \
         local ok, a = pcall(cjson.decode, s) out[i] = (ok and a == tonumber(s)) and 1 or s \
         end return out",
        "local t = cjson.decode('{\"a\":[1,2,{\"b\":null}]}') return t.a[3].b == cjson.null",
        "return #cjson.decode('[1,2,3]')",
        "return cjson.decode('{\"a\":1,\"a\":2}').a",
        "return cjson.decode('[true,false]')[2] == false",
        "return cjson.decode('null') == cjson.null",
        "return type(cjson.decode('null'))",
        "return #cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))",
        "return #cjson.decode('[' .. string.rep('1,', 9999) .. '1]')",
        "local s = string.rep('ab', 50000) return cjson.decode('\"' .. s .. '\"') == s",
    ]);
}

#[test]
fn encode_errors_match_redis() {
    lockstep(&[
        "return cjson.encode({[1]=1,[11]=2})",
        "return cjson.encode({[11]=1})",
        "return cjson.encode({[true]=1})",
        "return cjson.encode({[{}]=1})",
        "return cjson.encode({[1/0]=1})",
        "return cjson.encode(math.huge)",
        "return cjson.encode(-1/0)",
        "return cjson.encode({0/0})",
        "return cjson.encode(function() end)",
        "return cjson.encode({function() end})",
        "return cjson.encode(coroutine.create(function() end))",
        "return cjson.encode()",
        "return cjson.encode(1,2)",
        "return cjson:encode(1)",
        "local e = cjson.encode return e(1,2)",
        "local t={} local c=t for i=1,1000 do c[1]={} c=c[1] end return cjson.encode(t)",
        "local c=cjson.new() c.encode_max_depth(2) return c.encode({{{1}}})",
        "local c=cjson.new() c.encode_max_depth(100000) local t={} local x=t \
         for i=1,9000 do x[1]={} x=x[1] end return c.encode(t)",
        "local c=cjson.new() c.encode_max_depth(100000) local t={} local x=t \
         for i=1,9000 do x.a={} x=x.a end return c.encode(t)",
        "local c=cjson.new() c.encode_max_depth(100000) local t={} local x=t \
         for i=1,9000 do if i%2==0 then x.a={} x=x.a else x[1]={} x=x[1] end end \
         return c.encode(t)",
        "\nlocal x = 1\nreturn cjson.encode({f = function() end})",
    ]);
}

#[test]
fn decode_errors_match_redis() {
    lockstep(&[
        "return cjson.decode('x')",
        "return cjson.decode('')",
        "return cjson.decode(' ')",
        "return cjson.decode('[1,')",
        "return cjson.decode('[1 2]')",
        "return cjson.decode('[1,2')",
        "return cjson.decode('{1:2}')",
        "return cjson.decode('{\"a\" 1}')",
        "return cjson.decode('{\"a\"')",
        "return cjson.decode('{\"a\":1')",
        "return cjson.decode('{\"a\":1,}')",
        "return cjson.decode('{,}')",
        "return cjson.decode(']')",
        "return cjson.decode('1 2')",
        "return cjson.decode('[1,]')",
        "return cjson.decode('[1]x')",
        "return cjson.decode('{\"a\":1}}')",
        "return cjson.decode('\"abc')",
        "return cjson.decode('\"ab\\0\"')",
        "return cjson.decode('\"a\\\\qb\"')",
        "return cjson.decode('\"\\\\')",
        "return cjson.decode('\"a\\\\u12\"')",
        "return cjson.decode('[\"\\\\u0\"]')",
        "return cjson.decode('\"\\\\uzzzz\"')",
        "return cjson.decode('\"\\\\ud83d\"')",
        "return cjson.decode('\"\\\\ude00\"')",
        "return cjson.decode('\"\\\\ud83d\\\\u0041\"')",
        "return cjson.decode('{\"a\\\\x\":1}')",
        "return cjson.decode('nul')",
        "return cjson.decode('tru')",
        "return cjson.decode('\\1')",
        "return cjson.decode('infinit')",
        "return cjson.decode('0x')",
        "return cjson.decode('1e')",
        "return cjson.decode('1.5.5')",
        "return cjson.decode('-')",
        "return cjson.decode('a\\0b')",
        "return cjson.decode('\"\\0\"')",
        "return cjson.decode(nil)",
        "return cjson.decode({})",
        "return cjson.decode()",
        "return cjson.decode('1', '2')",
        "return cjson:decode()",
        "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('01')",
        "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('-inf')",
        "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('+1')",
        "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('0x10')",
        "local c=cjson.new() c.decode_invalid_numbers(false) return c.decode('NaN')",
        "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
        "local c=cjson.new() c.decode_max_depth(2) return c.decode('[[[1]]]')",
        "local c=cjson.new() c.decode_max_depth(100000) return c.decode(string.rep('[', 9000))",
        "local c=cjson.new() c.decode_max_depth(100000) \
         return c.decode(string.rep('{\"a\":', 9000))",
        "local c=cjson.new() c.decode_max_depth(100000) \
         return c.decode(string.rep('{\"a\":[', 9000))",
        "\n\nreturn cjson.decode('[')",
    ]);
}

#[test]
fn configuration_matches_redis() {
    lockstep(&[
        "return {cjson.encode_max_depth(), cjson.decode_max_depth(), \
         cjson.encode_number_precision()}",
        "return {cjson.encode_sparse_array()}",
        "return {cjson.encode_keep_buffer(), cjson.encode_invalid_numbers(), \
         cjson.decode_invalid_numbers()}",
        "local c=cjson.new() local a,b,d = c.encode_sparse_array() \
         return table.concat({tostring(a), b, d}, ' ')",
        "local c=cjson.new() local a,b,d = c.encode_sparse_array(true, 0, 3) \
         return table.concat({tostring(a), b, d}, ' ')",
        "local c=cjson.new() local a,b,d = c.encode_sparse_array(nil, nil, 4) \
         return table.concat({tostring(a), b, d}, ' ')",
        "local c=cjson.new() return c.encode_sparse_array('on')",
        "local c=cjson.new() c.encode_sparse_array(true) return c.encode({[1]=1,[11]=2}) \
         == '{\"1\":1,\"11\":2}' or c.encode({[1]=1,[11]=2}) == '{\"11\":2,\"1\":1}'",
        "local c=cjson.new() c.encode_sparse_array(false, 0) return c.encode({[1]=1,[20]=2})",
        "local c=cjson.new() c.encode_sparse_array(false, 1, 1) \
         return {pcall(c.encode, {[1]=1,[3]=1})}",
        "local c=cjson.new() return table.concat({tostring(c.encode_invalid_numbers('null')), \
         c.encode(0/0), c.encode(1/0)}, ' ')",
        "local c=cjson.new() return table.concat({tostring(c.encode_invalid_numbers(true)), \
         c.encode(0/0), c.encode(1/0), c.encode(-1/0), c.encode(-(0/0))}, ' ')",
        "local c=cjson.new() c.encode_invalid_numbers(true) return c.encode({[1/0]=1})",
        "local c=cjson.new() c.encode_invalid_numbers('null') return c.encode({[-1/0]=1})",
        "local c=cjson.new() return table.concat({tostring(c.encode_invalid_numbers('off')), \
         tostring(c.encode_invalid_numbers('on')), c.encode_invalid_numbers('null'), \
         tostring(c.encode_invalid_numbers(false)), tostring(c.decode_invalid_numbers('on'))}, \
         ' ')",
        "local c=cjson.new() c.encode_number_precision(3) return c.encode({1/3, 12345, 0.5})",
        "local c = cjson.new() c.encode_number_precision(1) local d = cjson.new() \
         d.encode_number_precision(2) return table.concat({cjson.encode(0.15), c.encode(0.15), \
         c.encode(1234), c.encode(5), c.encode(2.5), d.encode(0.125), c.encode(0.5), \
         c.encode(1.5), c.encode(25), c.encode(35)}, ' ')",
        "local c=cjson.new() return c.encode_max_depth('5')",
        "local c=cjson.new() return c.encode_max_depth(2.7)",
        "local c=cjson.new() return c.encode_max_depth(2^32+5)",
        "local c=cjson.new() return c.encode_max_depth(-2^32+5)",
        "local c=cjson.new() return c.encode_max_depth(' 0x10 ')",
        "local c=cjson.new() return c.encode_keep_buffer('on')",
        "local c=cjson.new() return table.concat({tostring(c.encode_keep_buffer(false)), \
         c.encode('x'), tostring(c.encode_keep_buffer())}, ' ')",
        "local c = cjson.new() c.encode_max_depth(3) \
         return cjson.encode_max_depth() .. ' ' .. c.encode_max_depth()",
        "local c=cjson.new() return c.encode_invalid_numbers('bogus')",
        "local c=cjson.new() return c.decode_invalid_numbers('null')",
        "local c=cjson.new() return c.encode_invalid_numbers({})",
        "local c=cjson.new() return c.encode_max_depth(0)",
        "local c=cjson.new() return c.encode_max_depth(1e20)",
        "local c=cjson.new() return c.encode_max_depth(0/0)",
        "local c=cjson.new() return c.encode_max_depth('x')",
        "local c=cjson.new() return c.encode_max_depth(1,2)",
        "local c=cjson.new() return c.decode_max_depth(-1)",
        "local c=cjson.new() return c.encode_number_precision(15)",
        "local c=cjson.new() return c.encode_number_precision(0)",
        "local c=cjson.new() return c.encode_keep_buffer('bad')",
        "local c=cjson.new() return c.encode_keep_buffer(1)",
        "local c=cjson.new() return c.encode_keep_buffer(true, 2)",
        "local c=cjson.new() return c.encode_sparse_array(true, -1)",
        "local c=cjson.new() return c.encode_sparse_array(true, 'x')",
        "local c=cjson.new() return c.encode_sparse_array(1)",
        "local c=cjson.new() return c.encode_sparse_array(true, 2, 3, 4)",
        "return cjson:encode_max_depth()",
    ]);
}

#[test]
fn module_fields_match_redis() {
    lockstep(&[
        "return cjson._VERSION",
        "return cjson._NAME",
        "return type(cjson.null)",
        "return tostring(cjson.null)",
        "return {cjson.new()._VERSION, cjson.new()._NAME, type(cjson.new().null), \
         cjson.new().null == cjson.null}",
        "local t={} for k,v in pairs(cjson.new()) do t[#t+1]=k..'='..type(v) end \
         table.sort(t) return t",
        "local c = cjson.new() c.foo = 1 return c.foo",
        "return type(cjson.new)",
    ]);
}

/// Errors a script catches with `pcall` are strings, as `luaL_error` raises them (no
/// position when `pcall` calls the function itself).
#[test]
fn caught_errors_match_redis() {
    lockstep(&[
        "return {pcall(cjson.decode, 'x')}",
        "return {pcall(function() return cjson.decode('x') end)}",
        "return {pcall(cjson.encode, 1, 2)}",
        "local ok, e = pcall(cjson.encode, {f = tostring}) return e",
        "local ok, e = pcall(cjson.decode, '[1,') return 'caught: ' .. e",
        "local c = cjson.new() local ok, e = pcall(c.decode, '{') return e",
        "local c = cjson.new() return {pcall(function() return c.encode(function() end) end)}",
    ]);
}

/// Redis 7 makes the library table read-only.
#[test]
fn library_table_is_read_only() {
    lockstep(&[
        "cjson.foo = 1 return 1",
        "cjson.encode = nil return 1",
        "rawset(cjson, 'x', 1) return 1",
    ]);
}
